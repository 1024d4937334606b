"""`real2sim recon pointcloud FILE... -o SCENE_DIR`: scans to a segmented, watertight scene folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from real2sim.cli.inputs import check_path
from real2sim.cli.options import Opt, build, options
from real2sim.recon.pointcloud.config import PointCloudReconCfg

NOT_A_SCAN = "is a directory, not a point-cloud file (give the scan files inside it)"


@click.command("pointcloud")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@options(
    PointCloudReconCfg,
    "out_dir",
    "overwrite",
    "units",
    "poses",
    "sensor_origin",
    "object_only",
    "save_point_labels",
    "voxel",
    "mesh_voxel",
    "max_triangles",
    "colour_split",
    "concave_split",
    "density",
    "symmetry_completion",
    "seed",
    out_dir=Opt(("-o", "--out"), required=True),
    overwrite=Opt(("--overwrite",)),
    sensor_origin=Opt(metavar="X,Y,Z"),
    symmetry_completion=Opt(("--symmetry/--no-symmetry",)),
)
def command(files: tuple[Path, ...], **params: Any) -> None:
    """Reconstruct a scene (support + one watertight mesh per object) from point-cloud FILES."""
    for f in files:
        check_path(f, "file", "no such file", not_file=NOT_A_SCAN)
    from real2sim.cli.echo import echo_summary
    from real2sim.recon.pointcloud.run import run_recon_pointcloud

    out_dir = params["out_dir"]
    out = run_recon_pointcloud(build(PointCloudReconCfg, params, inputs=tuple(files)))
    objs = ", ".join(
        f"{o.name} ({len(o.mesh.faces)} faces, {o.mesh.volume * 1e6:.0f} cm^3)" for o in out.scene.objects
    )
    echo_summary(f"wrote {out_dir}: {len(out.scene.objects)} object(s): {objs}")
