"""Reading user files within bounds: JSON of any nesting depth and gzip of any ratio end in one ``InputError``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from real2sim.errors import InputError

GZIP_BUDGET = 256 << 20
"""Most bytes one gzipped input decompresses to (256 MiB)."""
GZIP_RATIO_MAX = 50
"""Most a gzipped input may expand (numbers in text compress 3-10x; a gzip bomb of repeated rows, 1000x)."""


def gunzip(path: Path, budget: int = GZIP_BUDGET) -> bytes:
    """The decompressed bytes, refused past ``GZIP_RATIO_MAX`` times the file or ``budget`` before they are all held
    (read in 1 MiB pieces)."""
    size = path.stat().st_size
    limit = min(budget, max(64 << 20, GZIP_RATIO_MAX * size))
    parts, total = [], 0
    with gzip.open(path, "rb") as f:
        while piece := f.read(1 << 20):
            total += len(piece)
            if total > limit:
                raise InputError(
                    path,
                    f"decompresses to over {limit >> 20} MiB from {size >> 10} KiB; refused as a gzip bomb "
                    f"(at most {GZIP_RATIO_MAX}x the file, {budget >> 20} MiB)",
                )
            parts.append(piece)
    return b"".join(parts)


def load_json(path: Path, what: str = "JSON") -> Any:
    """The parsed JSON of ``path`` (``.gz`` decompressed within bounds); a malformed, undecodable or too deeply
    nested document is one ``InputError`` naming the file."""
    path = Path(path)
    if path.exists() and not path.is_file():
        raise InputError(path, "not a regular file")
    try:
        raw = gunzip(path) if path.name.lower().endswith(".gz") else path.read_bytes()
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(path, f"malformed {what} ({' '.join(str(exc).split())})") from None
    except RecursionError:
        raise InputError(path, f"malformed {what} (nested too deeply)") from None
    except OSError as exc:
        raise InputError(path, f"cannot read {what} ({exc.strerror or exc})") from None
