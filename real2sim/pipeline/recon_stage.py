"""The recon stage of ``process``: a session's scans, photos or splats to its scene folder, with the stage key that
lets an unchanged recon be reused (``run.json``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from real2sim.pipeline.cache import hashed_options, stage_key
from real2sim.pipeline.runner import StageRunner
from real2sim.pipeline.session import Session
from real2sim.pipeline.summary import SceneSummary
from real2sim.scene import Scene, load_scene


def run_recon_stage(
    r: StageRunner, source: str, scene_dir: Path, key: str, recon: Callable[[], Any]
) -> Scene | None:
    """Run one recon stage; the ``Scene`` it built, or None when it was reused (or built none)."""
    built: list[Scene | None] = [None]

    def work() -> SceneSummary:
        built[0] = recon().scene
        if built[0] is None:  # e.g. photos that stopped after SfM: summarise what was written
            built[0] = load_scene(scene_dir)
        return SceneSummary.of(source, built[0])

    r.run("recon", scene_dir, key, work)
    return built[0]


def recon_lidar(r: StageRunner, s: Session, scene_dir: Path) -> Scene | None:
    from real2sim.recon.pointcloud.config import PointCloudReconCfg
    from real2sim.recon.pointcloud.run import run_recon_pointcloud

    cfg = PointCloudReconCfg(
        inputs=tuple(s.lidar),
        out_dir=scene_dir,
        units=s.lidar_units,
        poses=s.lidar_poses,
        object_only=s.lidar_object_only,
        sensor_origin=s.sensor_origin,
        save_point_labels=True,
        overwrite=r.cfg.overwrite,
        density=s.density,
        friction=(s.friction, 0.005, 0.0001),
    )
    inputs = [*s.lidar, *([s.lidar_poses] if s.lidar_poses else [])]
    options = hashed_options(cfg)
    photos = photos_cfg(s, None) if s.images is not None and s.colour_scans is not False else None
    if photos is not None:  # the photos may colour the scan's meshes
        inputs.append(photos.image_dir)
        options = {"scan": options, "photo_colours": hashed_options(photos)}

    def run() -> Any:
        out = run_recon_pointcloud(cfg)
        if photos is None or (s.colour_scans is None and coloured(out.scene)):
            return out
        from real2sim.recon.photos.colour import colour_scene_with_photos, rewrite_scene

        scene = colour_scene_with_photos(out.scene, photos)
        if scene is not out.scene:
            rewrite_scene(scene_dir, scene)
        return dataclasses.replace(out, scene=scene)

    return run_recon_stage(r, "lidar", scene_dir, stage_key("recon", inputs, options), run)


def coloured(scene: Scene) -> bool:
    """Whether any object mesh of ``scene`` carries vertex colours."""
    return any(o.mesh.visual is not None and o.mesh.visual.kind == "vertex" for o in scene.objects)


def recon_photos(r: StageRunner, s: Session, scene_dir: Path) -> Scene | None:
    from real2sim.recon.photos.run import run_recon_photos

    cfg = photos_cfg(s, scene_dir, r.cfg.overwrite)
    inputs = [cfg.image_dir] + ([s.known_distance] if s.known_distance is not None else [])
    key = stage_key("recon", inputs, hashed_options(cfg))
    return run_recon_stage(r, "photos", scene_dir, key, lambda: run_recon_photos(cfg))


def photos_cfg(s: Session, out_dir: Path | None, overwrite: bool = False) -> Any:
    from real2sim.recon.photos.run import PhotosReconCfg
    from real2sim.recon.photos.sfm import SfmCfg

    assert s.images is not None
    kw: dict[str, Any] = {"image_dir": s.images, "out_dir": out_dir, "overwrite": overwrite}
    if s.marker is not None:
        kw.update(marker_size=s.marker.size, marker_dictionary=s.marker.dictionary, marker_id=s.marker.id)
    if s.known_distance is not None:
        kw["known_distance"] = s.known_distance
    sfm: dict[str, Any] = {
        k: v for k, v in (("camera_model", s.camera_model), ("intrinsics", s.intrinsics)) if v is not None
    }
    return PhotosReconCfg(**kw, scale=s.photos_scale, object_only=s.photos_object_only, sfm=SfmCfg(**sfm))


def recon_splat(r: StageRunner, s: Session, scene_dir: Path) -> Scene | None:
    from real2sim.recon.splats.run import SplatReconCfg, run_recon_splat

    cfg = SplatReconCfg(
        input=s.splats[0],
        out_dir=scene_dir,
        scale=s.splat_scale,
        overwrite=r.cfg.overwrite,
        object_only=s.splat_object_only,
        density=s.density,
    )
    key = stage_key("recon", [s.splats[0]], hashed_options(cfg))
    return run_recon_stage(r, "splat", scene_dir, key, lambda: run_recon_splat(cfg))
