"""``real2sim recon photos``: photos around a scene → SfM cameras → metric scale → dense points → ``Scene``.

Output folder: ``cameras.json`` (per registered image: file, ``cam_from_world`` 4x4 in the scene frame,
intrinsics), ``sfm_report.json`` (unregistered images with the reason, warnings, scale), and unless
``poses_only`` the scene (``scene.json`` + ``meshes/``) built by the point-cloud path from the dense points (``recon.mvs``);
with ``splat`` also ``nerfstudio/`` (``transforms.json`` + images).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from real2sim.atomic import output_dir, write_json
from real2sim.errors import NotBuiltError
from real2sim.outguard import check_output
from real2sim.provenance import Provenance
from real2sim.recon.photos.config import PhotosReconCfg
from real2sim.recon.photos.marker import (
    ScaleEstimate,
    load_known_distance,
    scale_from_known_distance,
    scale_from_marker,
)
from real2sim.recon.photos.sfm import SfmResult, run_sfm
from real2sim.rounding import round_frame, significant
from real2sim.scene import Scene, write_scene_into

log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class PhotosReconOutput:
    sfm: SfmResult
    world_from_sfm: np.ndarray
    """Similarity (scale * rotation, translation) from the SfM frame into the scene frame."""
    scale: ScaleEstimate | None
    scene: Scene | None


def cameras_json(sfm: SfmResult, world_from_sfm: np.ndarray) -> dict:
    """Per registered image: file, ``cam_from_world`` (scene frame, metres) and intrinsics."""
    from real2sim.recon.photos.align import Similarity

    s = float(np.cbrt(np.linalg.det(world_from_sfm[:3, :3])))
    sim = Similarity(s, world_from_sfm[:3, :3] / s, world_from_sfm[:3, 3])
    cams = []
    for n in sfm.registered:
        pose = round_frame(sim.apply_to_cam_from_world(sfm.cam_from_world[n]))
        cams.append({"file": n, "cam_from_world": pose.tolist(), **sfm.intrinsics[n].to_json()})
    return {
        "convention": "cam_from_world 4x4, OpenCV camera axes (x right, y down, z forward)",
        "cameras": cams,
    }


def median_view_depth(sfm: SfmResult) -> float:
    """Median over the registered views of the median depth of the sparse points each sees [SfM units]."""
    depths = []
    for n in sfm.registered:
        idx = sfm.observations[n][:, 2].astype(int)
        z = sfm.points[idx] @ sfm.cam_from_world[n][2, :3] + sfm.cam_from_world[n][2, 3]
        if (z > 0).any():
            depths.append(float(np.median(z[z > 0])))
    return float(np.median(depths)) if depths else 1.0


def camera_up(sfm: SfmResult, world_from_sfm: np.ndarray) -> np.ndarray:
    """Gravity-up estimate: the mean of the cameras' image-up directions (hand-held photos are taken upright; their
    tilts toward the scene cancel around it), in the frame of ``world_from_sfm``."""
    ups = np.array([-sfm.cam_from_world[n][1, :3] for n in sfm.registered]) @ world_from_sfm[:3, :3].T
    up = ups.mean(0)
    return up / np.linalg.norm(up)


def _report(sfm: SfmResult, est: ScaleEstimate | None, dense: str) -> dict:
    """The report's fields; no timings (they differ run to run and the outputs are byte-identical): they are logged."""
    log.info("timings: %s", ", ".join(f"{k} {v:.2f} s" for k, v in sfm.timings.items()))
    return {"images": len(sfm.images), "registered": len(sfm.registered), "mapper": sfm.mapper,
            "unregistered": dict(sfm.unregistered), "warnings": list(sfm.warnings),
            "mean_reprojection_error_px": sfm.mean_reprojection_error, "sparse_points": len(sfm.points),
            "scale": None if est is None else est.to_json(), "dense": dense}  # fmt: skip


def metric_scale(
    sfm: SfmResult,
    cfg: PhotosReconCfg,
    known: tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float]], float] | None = None,
) -> tuple[float | None, ScaleEstimate | None]:
    """Metres per SfM unit from the given scale, a known distance (``known``: its file already loaded) or the
    marker, with the estimate behind it; ``(None, None)`` when none is given."""
    if cfg.scale is not None:
        return float(cfg.scale), None
    if cfg.known_distance is not None:
        est = scale_from_known_distance(
            sfm, *(known if known is not None else load_known_distance(cfg.known_distance))
        )
    elif cfg.marker_size is not None:
        est = scale_from_marker(sfm, cfg.marker_size, cfg.marker_dictionary, cfg.marker_id)
    else:
        return None, None
    return est.scale, est


def run_recon_photos(cfg: PhotosReconCfg) -> PhotosReconOutput:
    """SfM → scale → (points → scene). Writes ``cfg.out_dir`` atomically when given."""
    cfg.validate()
    inputs = (cfg.image_dir, cfg.known_distance)
    if cfg.out_dir is not None:
        check_output(cfg.out_dir, inputs, overwrite=cfg.overwrite)
    # read the known-distance file before the minutes of SfM, so a bad file fails at once
    known = (
        load_known_distance(cfg.known_distance)
        if cfg.known_distance is not None and cfg.scale is None
        else None
    )
    sfm = run_sfm(cfg.image_dir, cfg.sfm)
    scale, est = metric_scale(sfm, cfg, known)
    if scale is None:
        scale = cfg.assumed_distance / median_view_depth(sfm)
        sfm = replace(sfm, warnings=(*sfm.warnings, (
            f"no scale given (marker, known distance or scale): sizes assume the cameras were about "
            f"{cfg.assumed_distance:g} m from the scene (set --assumed-distance or give a scale)")))  # fmt: skip
    scale = significant(scale)  # every length follows it
    world_from_sfm = np.diag([scale, scale, scale, 1.0])
    scene = None
    dense = "none"
    if not cfg.poses_only:
        from real2sim.recon.photos.mvs import dense_points
        from real2sim.recon.pointcloud.config import PointCloudReconCfg
        from real2sim.recon.pointcloud.scene import points_to_scene

        cloud, dense = dense_points(sfm, world_from_sfm, cfg.dense, cfg.mvs, sfm.timings)
        pts = cloud.points
        pc_cfg = PointCloudReconCfg().validate()
        if cfg.object_only:
            ext = float(np.ptp(pts, axis=0).max())
            pc_cfg = replace(pc_cfg, normal_radius=ext / 15, mesh_voxel=ext / 100).validate()
        out = points_to_scene(cloud, pc_cfg, object_only=cfg.object_only, input_name=Path(cfg.image_dir).name,
                              up=camera_up(sfm, world_from_sfm), timings=sfm.timings)  # fmt: skip
        world_from_sfm = round_frame(out.world_from_input @ world_from_sfm)
        steps = ("sfm", "scale", f"dense ({dense})", "segment + mesh")
        prov = Provenance.for_inputs([cfg.image_dir / n for n in sfm.images], steps, {
            "marker_size": cfg.marker_size, "scale": scale, "object_only": cfg.object_only, "dense": dense,
            "camera_model": cfg.sfm.camera_model, "intrinsics": cfg.sfm.intrinsics})  # fmt: skip
        scene = replace(out.scene, provenance=prov, world_from_input={"sfm": world_from_sfm})
    if cfg.out_dir is not None:
        with output_dir(cfg.out_dir, overwrite=cfg.overwrite, inputs=inputs) as tmp:
            write_json(tmp / "cameras.json", cameras_json(sfm, world_from_sfm))
            write_json(tmp / "sfm_report.json", _report(sfm, est, dense))
            if scene is not None:
                write_scene_into(scene, tmp)
            if cfg.splat:
                from real2sim.recon.photos.nerfstudio import write_nerfstudio_dataset

                write_nerfstudio_dataset(sfm, tmp / "nerfstudio", world_from_sfm)
    result = PhotosReconOutput(sfm, world_from_sfm, est, scene)
    if cfg.splat:
        from real2sim.recon.photos.nerfstudio import INSTALL_HINT, nerfstudio_available

        if not nerfstudio_available():
            where = (
                f"; the dataset is in {Path(cfg.out_dir) / 'nerfstudio'}" if cfg.out_dir is not None else ""
            )
            raise NotBuiltError(INSTALL_HINT + where)
        # Training needs a GPU environment; with nerfstudio present the splat continues through recon splat.
        from real2sim.recon.photos.nerfstudio import train_splatfacto

        if cfg.out_dir is not None:
            train_splatfacto(Path(cfg.out_dir) / "nerfstudio", Path(cfg.out_dir))
    return result
