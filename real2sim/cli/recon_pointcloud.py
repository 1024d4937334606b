"""`real2sim recon pointcloud FILE... -o SCENE_DIR`: scans to a segmented, watertight scene folder."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("pointcloud")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o", "--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Scene folder to write."
)
@click.option("--units", type=click.Choice(["m", "cm", "mm"]), default="m", show_default=True,
              help="What one unit in the files is.")  # fmt: skip
@click.option("--poses", type=click.Path(path_type=Path), default=None,
              help="Scan poses: JSON {file: world_from_sensor 4x4} or bun.conf-style 'bmesh' lines.")  # fmt: skip
@click.option("--object-only", is_flag=True, help="One object, no support in view (turntable scan).")
@click.option("--save-point-labels", is_flag=True, help="Also write point_labels.npy for the first file.")
@click.option("--voxel", type=float, default=0.005, show_default=True, help="Downsampling voxel [m].")
@click.option("--mesh-voxel", type=float, default=0.002, show_default=True, help="Finest meshing grid [m].")
@click.option(
    "--max-triangles", type=int, default=20000, show_default=True, help="Triangle budget per object."
)
@click.option(
    "--colour-split", type=float, default=None, help="Split touching objects by colour (RGB distance)."
)
@click.option("--concave-split", type=float, default=None,
              help="Split touching/stacked objects along concave creases turning more than this [deg] (e.g. 30).")  # fmt: skip
@click.option("--density", type=float, default=500.0, show_default=True, help="Object density [kg/m^3].")
@click.option(
    "--symmetry/--no-symmetry",
    default=True,
    show_default=True,
    help="Complete a thin-walled object's unseen side through a symmetry the scan supports.",
)
@click.option("--seed", type=int, default=0, show_default=True)
def command(
    files: tuple[Path, ...],
    out_dir: Path,
    units: str,
    poses: Path | None,
    object_only: bool,
    save_point_labels: bool,
    voxel: float,
    mesh_voxel: float,
    max_triangles: int,
    colour_split: float | None,
    concave_split: float | None,
    density: float,
    symmetry: bool,
    seed: int,
) -> None:
    """Reconstruct a scene (support + one watertight mesh per object) from point-cloud FILES."""
    from real2sim.cli import echo_summary
    from real2sim.recon.pointcloud import PointCloudReconCfg, run_recon_pointcloud

    cfg = PointCloudReconCfg(
        inputs=tuple(files), out_dir=out_dir, units=units, poses=poses, object_only=object_only,
        save_point_labels=save_point_labels, voxel=voxel, mesh_voxel=mesh_voxel, max_triangles=max_triangles,
        colour_split=colour_split, concave_split=concave_split, density=density, symmetry_completion=symmetry,
        seed=seed,
    )  # fmt: skip
    out = run_recon_pointcloud(cfg)
    objs = ", ".join(
        f"{o.name} ({len(o.mesh.faces)} faces, {o.mesh.volume * 1e6:.0f} cm^3)" for o in out.scene.objects
    )
    echo_summary(f"wrote {out_dir}: {len(out.scene.objects)} object(s): {objs}")
