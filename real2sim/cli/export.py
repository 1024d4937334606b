"""`real2sim export SCENE_DIR -o PKG_DIR`: a scene folder to a checked MuJoCo/URDF package."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("export")
@click.argument("scene_dir", type=click.Path(path_type=Path))
@click.option(
    "-o", "--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Package folder to write."
)
@click.option(
    "--format", "formats", default="mjcf,urdf,usd", show_default=True, help="Comma list of mjcf, urdf, usd."
)
@click.option("--max-hulls", default=32, show_default=True, help="Convex hulls per object.")
@click.option("--max-hull-vertices", default=64, show_default=True, help="Vertices per hull.")
@click.option(
    "--refine-tolerance",
    default=0.01,
    show_default=True,
    help="Split hulls bulging past the surface by more than this fraction of the object's diagonal "
    "while the hull budget has room (0 = off).",
)
@click.option("--workers", default=0, show_default=True, help="Worker processes (0 = one per core).")
@click.option("--name", default="", help="Model name (default: the scene folder's name).")
@click.option(
    "--no-cache", is_flag=True, help="Recompute convex decompositions instead of reusing cached ones."
)
def command(
    scene_dir: Path,
    out_dir: Path,
    formats: str,
    max_hulls: int,
    max_hull_vertices: int,
    refine_tolerance: float,
    workers: int,
    name: str,
    no_cache: bool,
) -> None:
    """Export SCENE_DIR (scene.json + meshes/) to a validated sim package."""
    from real2sim.cli import echo_summary
    from real2sim.export.config import ExportCfg
    from real2sim.export.package import run_export

    cfg = ExportCfg(
        scene_dir=scene_dir,
        out_dir=out_dir,
        name=name,
        formats=tuple(f.strip() for f in formats.split(",") if f.strip()),
        max_hulls=max_hulls,
        max_hull_vertices=max_hull_vertices,
        refine_tolerance=refine_tolerance,
        workers=workers,
        cache=not no_cache,
    )
    pkg = run_export(cfg)
    echo_summary(
        f"wrote {pkg.path} ({pkg.scene_xml.name}, {pkg.mjcf.name}"
        + (f", {pkg.urdf.name}" if pkg.urdf else "")
        + f"): {len(pkg.checks)} checks passed"
    )
