"""``run_recon_pointcloud``: files → registered cloud → ``points_to_scene`` → scene folder (atomic).

The scene folder holds ``scene.json`` + ``meshes/`` (``real2sim.scene``) and, when asked, ``point_labels.npy``
(one int32 per point of the first input file, file order, invalid points included). ``world_from_input`` in
``scene.json`` maps each input file's coordinates into the scene frame.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.atomic import output_dir, write_bytes
from real2sim.errors import ConfigError, InputError
from real2sim.outguard import check_output
from real2sim.progress import step
from real2sim.provenance import Provenance
from real2sim.recon.io import PointCloud, merge_clouds, unit_scale
from real2sim.recon.io.cloud import with_sensor_origin
from real2sim.recon.pointcloud.config import PointCloudReconCfg
from real2sim.recon.pointcloud.objects import ReconOutput
from real2sim.recon.pointcloud.register import read_poses, register_scans
from real2sim.recon.pointcloud.scene import points_to_scene
from real2sim.recon.pointcloud.voxel import point_labels_of, read_scan
from real2sim.rounding import round_frame
from real2sim.scene import Scene, write_scene_into

__all__ = ["PointCloudReconCfg", "ReconOutput", "run_recon_pointcloud", "load_clouds"]


def load_clouds(cfg: PointCloudReconCfg) -> tuple[list[PointCloud], list[np.ndarray], bool]:
    """Read every input and bring it into one frame: ``(clouds, common_from_file per file, poses_given)``."""
    clouds = []
    for p in cfg.inputs:
        c = read_scan(p, cfg.units, cfg.mesh_voxel)  # a huge file: its voxel means
        clouds.append(with_sensor_origin(c, cfg.origin_m(), cfg.sensor_at_origin))
    names = [Path(p).name for p in cfg.inputs]
    if cfg.poses is not None:
        poses = read_poses(cfg.poses)
        missing = [n for n in names if n not in poses]
        if missing:
            raise InputError(
                cfg.poses, f"no pose for {', '.join(missing)} (poses given for: {', '.join(poses)})"
            )
        scale = unit_scale(cfg.units)
        mats = []
        for n in names:
            m = poses[n].copy()
            m[:3, 3] *= scale  # pose translations are in the files' units
            mats.append(m)
        return clouds, mats, True
    if len(clouds) == 1:
        return clouds, [np.eye(4)], False
    with step("registering scans"):
        regs = register_scans(
            [c.points[c.valid_mask()] for c in clouds], names, voxel=cfg.register_voxel,
            min_fitness=cfg.register_min_fitness, seed=cfg.seed,
        )  # fmt: skip
    return clouds, list(regs.world_from_scan), False


def run_recon_pointcloud(cfg: PointCloudReconCfg) -> ReconOutput:
    """Reconstruct a scene from the point-cloud files of ``cfg`` and write it to ``cfg.out_dir`` (if set)."""
    cfg.validate()
    if not cfg.inputs:
        raise ConfigError("no input files given")
    names = [Path(p).name for p in cfg.inputs]
    if len(set(names)) != len(names):
        raise ConfigError(f"input file names must be distinct (they key world_from_input): {names}")
    inputs = (*cfg.inputs, cfg.poses)
    if cfg.out_dir is not None:
        check_output(cfg.out_dir, inputs, overwrite=cfg.overwrite)
    clouds, common_from_file, poses_given = load_clouds(cfg)
    merged = merge_clouds([c.transformed(T) for c, T in zip(clouds, common_from_file, strict=True)], names[0])
    n0 = len(clouds[0])
    with step("reconstructing scene"):
        out = points_to_scene(
            merged, cfg, object_only=cfg.object_only, input_name=names[0] if len(names) == 1 else "+".join(names),
            up=np.array([0.0, 0.0, 1.0]) if poses_given else None, keep_xy=poses_given,
        )  # fmt: skip
    world_from_common = out.world_from_input
    wfi = {n: round_frame(world_from_common @ T) for n, T in zip(names, common_from_file, strict=True)}
    steps = ["read"] + (["poses"] if poses_given else ["register"] if len(names) > 1 else [])
    steps += ["object"] if cfg.object_only else ["support", "segment"]
    steps += ["mesh"]
    prov = Provenance.for_inputs(list(cfg.inputs), tuple(steps), cfg.options())
    scene = Scene(support=out.scene.support, objects=out.scene.objects, world_from_input=wfi, provenance=prov)
    labels = point_labels_of(clouds[0], out.point_labels[:n0])
    result = ReconOutput(scene=scene, world_from_input=wfi[names[0]], point_labels=labels)
    if cfg.out_dir is not None:
        with output_dir(cfg.out_dir, overwrite=cfg.overwrite, inputs=inputs) as tmp:
            write_scene_into(scene, tmp)
            if cfg.save_point_labels:
                write_bytes(tmp / "point_labels.npy", _npy_bytes(labels))
    return result


def _npy_bytes(a: np.ndarray) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(a), allow_pickle=False)
    return buf.getvalue()
