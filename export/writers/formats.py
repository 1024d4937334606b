"""The package's files besides the MJCF, one line per format: ``--format`` name → the module of this package whose
``write(folder, name, placed, support)`` writes that format's files (imported only when the format is written). A
new format is a module here, one line in ``WRITERS`` and its name in ``export.config.FORMATS``."""

from __future__ import annotations

WRITERS: dict[str, str] = {
    "urdf": "urdf_objects",
    "usd": "usd",
}
