"""`real2sim recon photos IMAGE_DIR -o SCENE_DIR`: photos → SfM cameras → metric scale → scene."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from real2sim.cli.inputs import check_path
from real2sim.cli.options import Opt, build, options
from real2sim.recon.photos.config import PhotosReconCfg, SfmCfg


@click.command("photos")
@click.argument("image_dir", type=click.Path(path_type=Path))
@options(
    PhotosReconCfg,
    "out_dir",
    "overwrite",
    "marker_size",
    "marker_dictionary",
    "marker_id",
    "scale",
    "known_distance",
    "assumed_distance",
    out_dir=Opt(("-o", "--out"), required=True),
    overwrite=Opt(("--overwrite",)),
    marker_dictionary=Opt(("--marker-dict",)),
)
@click.option(
    "--intrinsics", help="Known intrinsics: 'fx,fy,cx,cy', 'f,cx,cy' or a *_par.txt file (fixed in the fit)."
)
@options(SfmCfg, "camera_model")
@options(PhotosReconCfg, "dense", "splat", "poses_only", "object_only")
def command(image_dir: Path, intrinsics: str | None, camera_model: str, **params: Any) -> None:
    """Reconstruct a scene from overlapping photos."""
    check_path(image_dir, "dir", "no such image folder")
    from real2sim.cli.echo import echo_summary
    from real2sim.recon.photos.run import run_recon_photos
    from real2sim.recon.photos.sfm import parse_intrinsics

    sfm = SfmCfg(camera_model=camera_model)
    if intrinsics is not None:
        model, values = parse_intrinsics(intrinsics)
        sfm = SfmCfg(camera_model=model, intrinsics=values)
    res = run_recon_photos(build(PhotosReconCfg, params, image_dir=image_dir, sfm=sfm))
    lines = [f"registered {len(res.sfm.registered)}/{len(res.sfm.images)} images ({res.sfm.mapper} mapping)"]
    lines += [f"unregistered {n}: {why}" for n, why in res.sfm.unregistered.items()]
    lines += [f"warning: {w}" for w in res.sfm.warnings]
    if res.scale is not None:
        lines.append(f"scale {res.scale.scale:.6g} m/unit ± {res.scale.sigma / res.scale.scale:.2%} "
                     f"({res.scale.views} views)")  # fmt: skip
    if res.scene is not None:
        lines.append(f"{len(res.scene.objects)} object(s)")
    lines.append(f"wrote {params['out_dir']}")
    echo_summary("\n".join(lines))
