"""`real2sim recon photos IMAGE_DIR -o SCENE_DIR`: photos → SfM cameras → metric scale → scene."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("photos")
@click.argument("image_dir", type=click.Path(path_type=Path))
@click.option(
    "-o", "--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Scene folder to write."
)
@click.option(
    "--marker-size", type=float, default=None, help="Side [m] of the printed marker's black square."
)
@click.option("--marker-dict", default="DICT_4X4_50", show_default=True, help="OpenCV marker dictionary.")
@click.option("--marker-id", type=int, default=0, show_default=True, help="Marker id.")
@click.option("--scale", type=float, default=None, help="Known metres per SfM unit (instead of a marker).")
@click.option(
    "--known-distance",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML file: a distance [m] between two points marked in >= 2 photos each (instead of a marker).",
)
@click.option(
    "--intrinsics", default=None, help="Known intrinsics: 'fx,fy,cx,cy', 'f,cx,cy' or a *_par.txt file."
)
@click.option(
    "--camera-model", default="SIMPLE_RADIAL", show_default=True, help="COLMAP camera model to fit."
)
@click.option("--dense", type=click.Choice(["cpu", "cuda", "auto"]), default="auto", show_default=True)
@click.option(
    "--splat", is_flag=True, help="Write a nerfstudio dataset and train splatfacto (needs nerfstudio)."
)
@click.option("--poses-only", is_flag=True, help="Stop after SfM (cameras.json).")
@click.option("--object-only", is_flag=True, help="One object, no support in view.")
def command(image_dir, out_dir, marker_size, marker_dict, marker_id, scale, known_distance, intrinsics, camera_model, dense, splat,
            poses_only, object_only) -> None:  # fmt: skip
    """Reconstruct a scene from overlapping photos."""
    from real2sim.cli import echo_summary
    from real2sim.recon.photos import PhotosReconCfg, run_recon_photos
    from real2sim.recon.sfm import SfmCfg, parse_intrinsics

    sfm = SfmCfg(camera_model=camera_model)
    if intrinsics is not None:
        model, params = parse_intrinsics(intrinsics)
        sfm = SfmCfg(camera_model=model, intrinsics=params)
    cfg = PhotosReconCfg(image_dir=image_dir, out_dir=out_dir, sfm=sfm, marker_size=marker_size,
                         marker_dictionary=marker_dict, marker_id=marker_id, scale=scale,
                         known_distance=known_distance, dense=dense, splat=splat,
                         poses_only=poses_only, object_only=object_only)  # fmt: skip
    res = run_recon_photos(cfg)
    lines = [f"registered {len(res.sfm.registered)}/{len(res.sfm.images)} images ({res.sfm.mapper} mapping)"]
    lines += [f"unregistered {n}: {why}" for n, why in res.sfm.unregistered.items()]
    lines += [f"warning: {w}" for w in res.sfm.warnings]
    if res.scale is not None:
        lines.append(f"scale {res.scale.scale:.6g} m/unit ± {res.scale.sigma / res.scale.scale:.2%} "
                     f"({res.scale.views} views)")  # fmt: skip
    if res.scene is not None:
        lines.append(f"{len(res.scene.objects)} object(s)")
    lines.append(f"wrote {out_dir}")
    echo_summary("\n".join(lines))
