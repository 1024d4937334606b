"""`real2sim export SCENE_DIR -o PKG_DIR`: a scene folder to a checked MJCF / URDF / USD package."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from real2sim.cli.inputs import check_path
from real2sim.cli.options import Opt, build, options
from real2sim.export.config import ExportCfg
from real2sim.stdio import route_mujoco_warnings


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
    "mass",
    "density",
    "friction",
    "material",
    "support_hull",
    "strict",
    "workers",
    "name",
    "cache",
    out_dir=Opt(("-o", "--out"), required=True),
    overwrite=Opt(("--overwrite",)),
    formats=Opt(("--format",)),
    cache=Opt(("--cache/--no-cache",)),
    mass=Opt(multiple=True, metavar="NAME=KG"),
    density=Opt(multiple=True, metavar="NAME=KG_PER_M3"),
    friction=Opt(multiple=True, metavar="NAME=MU"),
    material=Opt(multiple=True, metavar="NAME=MATERIAL"),
)
def command(**params: Any) -> None:
    """Export SCENE_DIR (scene.json + meshes/) to a validated sim package."""
    check_path(params["scene_dir"], "any", "no such scene folder")
    route_mujoco_warnings()  # the inputs are checked: MuJoCo may load now
    from real2sim.cli.echo import echo_summary
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
