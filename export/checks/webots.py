"""urdf2webots converts a per-object URDF to a Webots PROTO (in a temporary folder, not kept)."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

from real2sim.export.checks.reference import EngineInputs
from real2sim.results import Check


def webots_checks(urdf: Path) -> list[Check]:
    from urdf2webots.importer import convertUrdfFile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{urdf.stem}.proto"
        sink = io.StringIO()
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                convertUrdfFile(input=str(urdf), output=str(out))
        except Exception as exc:  # the converter raises whatever its parser meets
            return [Check(f"urdf2webots converts {urdf.name}", False, f"{exc.__class__.__name__}: {exc}")]
        text = out.read_text(encoding="utf-8") if out.is_file() else ""
        ok = "PROTO" in text and "Physics" in text
        # the mesh count, not the size: the PROTO's header and mesh urls carry the (temporary) paths
        meshes = sum(ln.strip().startswith("url ") for ln in text.splitlines())
        detail = f"PROTO with physics, {meshes} mesh files" if ok else "no PROTO with physics written"
        return [Check(f"urdf2webots converts {urdf.name}", ok, detail)]


def run(inp: EngineInputs) -> list[Check]:
    """This engine's checks of a package (the entry point ``engines.ENGINES`` calls)."""
    return webots_checks(inp.urdfs[0])
