"""`real2sim export SCENE_DIR -o PKG_DIR`: a scene folder to a checked MJCF / URDF / USD package."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from real2sim.cli.options import Opt, build, options
from real2sim.export.config import ExportCfg


@click.command("export")
@click.argument("scene_dir", type=click.Path(path_type=Path))
@options(
    ExportCfg,
    "out_dir",
    "overwrite",
    "formats",
    "max_hulls",
    "max_hull_vertices",
    "refine_tolerance",
    "fidelity_tolerance",
    "support_hull",
    "strict",
    "workers",
    "name",
    "cache",
    out_dir=Opt(("-o", "--out"), required=True),
    overwrite=Opt(("--overwrite",)),
    formats=Opt(("--format",)),
    cache=Opt(("--cache/--no-cache",)),
)
def command(**params: Any) -> None:
    """Export SCENE_DIR (scene.json + meshes/) to a validated sim package."""
    from real2sim.cli import echo_summary
    from real2sim.export.package import run_export

    pkg = run_export(build(ExportCfg, params))
    files = [pkg.scene_xml.name, pkg.mjcf.name, *([pkg.urdf.name] if pkg.urdf else [])]
    files += [f.name for f in (pkg.path / f"{pkg.name}.usd",) if f.is_file()]
    files += ["urdf/"] if (pkg.path / "urdf").is_dir() else []
    passed, skipped = sum(c.passed for c in pkg.checks), sum(c.skipped for c in pkg.checks)
    echo_summary(
        f"wrote {pkg.path} ({', '.join(files)}): {passed} checks passed"
        + (f", {skipped} skipped" if skipped else "")
    )
