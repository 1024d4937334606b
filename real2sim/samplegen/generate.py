"""Assemble the sample capture session (objects, LiDAR scans, photos, robot logs, ground truth) into one folder.

Deterministic and seeded: the same seed gives the same bytes. The folder appears complete or not at all.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import trimesh

from real2sim.atomic import write_bytes, write_json
from real2sim.errors import ConfigError
from real2sim.meshio import save_mesh
from real2sim.progress import progress, step
from real2sim.samplegen.images import Marker, PhotoCfg, build_model, camera_poses, encode_jpeg, render_photos
from real2sim.samplegen.lidar import LidarCfg, cast_scan, ply_bytes, sensor_poses
from real2sim.samplegen.objects import make_objects, yaw_pose
from real2sim.samplegen.session import session_tables, write_session

TABLE_SIZE = (1.2, 0.8, 0.04)
"""Table top extents [m] (x, y, thickness); its top surface is the world's z = 0."""
FLOOR_Z = -0.75
"""Floor height [m] below the table top."""
TABLE_RGB = (0.62, 0.50, 0.38)
"""Table colour in the scans (the base colour of its photo texture)."""
FLOOR_RGB = (0.35, 0.35, 0.35)
"""Floor colour in the scans."""


@dataclass(frozen=True)
class SampleGenCfg:
    """Options of the sample session generator."""

    out_dir: Path
    """Output folder (replaced atomically)."""
    seed: int = 0
    """Seed of every random choice (placement, stone shape, noise, textures, camera poses, robot logs)."""
    n_scans: int = 3
    """Number of LiDAR viewpoints (>= 2)."""
    lidar: LidarCfg = field(default_factory=LidarCfg)
    """Sensor model of the scans."""
    photos: PhotoCfg = field(default_factory=PhotoCfg)
    """Camera model and number of photos."""
    marker_size: float = 0.08
    """Side of the ArUco marker's black square [m]."""
    gap: float = 0.05
    """Minimum clearance between objects (and the marker sheet) on the table [m]."""
    robot: bool = True
    """Also write the robot model and logs (when ``real2sim.samplegen.robot`` is available)."""

    def validate(self) -> None:
        if self.seed < 0:
            raise ConfigError(f"seed must be >= 0, got {self.seed}")
        if self.n_scans < 2:
            raise ConfigError(f"n_scans must be >= 2, got {self.n_scans}")
        if not 0.01 <= self.marker_size <= 0.3:
            raise ConfigError(f"marker_size must be in [0.01, 0.3] m, got {self.marker_size}")
        if self.gap < 0:
            raise ConfigError(f"gap must be >= 0 m, got {self.gap}")
        try:
            self.lidar.validate()
            self.photos.validate()
        except ValueError as exc:
            raise ConfigError(str(exc)) from None


def _T(m: np.ndarray) -> list[list[float]]:
    return np.asarray(m, dtype=float).tolist()


def table_meshes() -> tuple[trimesh.Trimesh, trimesh.Trimesh]:
    """(table top box with its top at z = 0, floor slab with its top at FLOOR_Z), world frame."""
    table = trimesh.creation.box(extents=TABLE_SIZE)
    table.apply_translation([0.0, 0.0, -TABLE_SIZE[2] / 2])
    floor = trimesh.creation.box(extents=(6.0, 6.0, 0.05))
    floor.apply_translation([0.0, 0.0, FLOOR_Z - 0.025])
    return table, floor


def _world_from_table() -> np.ndarray:
    """Pose of the table box's centre (its top face is z = 0)."""
    T = np.eye(4)
    T[2, 3] = -TABLE_SIZE[2] / 2
    return T


def _npy_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def _write_robot(out: Path, seed: int) -> dict[str, Any] | None:
    if importlib.util.find_spec("real2sim.samplegen.robot") is None:
        return None
    robot = importlib.import_module("real2sim.samplegen.robot")
    return robot.write_robot(out, seed=seed)


def generate_into(out: Path, cfg: SampleGenCfg) -> dict[str, Any]:
    """Write the whole session into the (empty) folder ``out``; returns the ground truth."""
    rng_obj, rng_lidar, rng_img = (
        np.random.default_rng(s) for s in np.random.SeedSequence(cfg.seed).spawn(3)
    )

    # Objects and the marker sheet, placed with >= gap clearance between footprints.
    sheet_radius = cfg.marker_size * 8 / 6 * np.sqrt(0.5)
    objects, (marker_xy,) = make_objects(rng_obj, gap=cfg.gap, extra_discs=(sheet_radius,))
    world_from_marker = yaw_pose(marker_xy[0], marker_xy[1], float(rng_obj.uniform(-np.pi, np.pi)))
    world_from_marker[2, 3] = 0.0002  # a printed sheet 0.2 mm thick; the marker frame is on its top surface
    marker = Marker(cfg.marker_size, world_from_marker)
    gt_objects = []
    for o in objects:
        save_mesh(out / "ground_truth" / "meshes" / f"{o.name}.ply", o.mesh)
        gt_objects.append(
            {
                "name": o.name,
                "kind": o.kind,
                "mesh": f"ground_truth/meshes/{o.name}.ply",
                "world_from_object": _T(o.world_from_object),
                "mass": o.mass,
                "density": o.density,
                "volume": o.volume,
                "rgb": list(o.rgb),
            }
        )

    # LiDAR scans.
    table, floor = table_meshes()
    world_meshes = [table, floor] + [o.mesh_in_world() for o in objects]
    labels = [0, -1] + list(range(1, len(objects) + 1))
    albedo = [0.55, 0.3] + [float(np.mean(o.rgb)) for o in objects]
    rgb = [TABLE_RGB, FLOOR_RGB] + [(*o.rgb,) for o in objects]
    poses = sensor_poses(rng_lidar, cfg.n_scans)
    gt_lidar, poses_json, files = [], {}, []
    with progress("casting LiDAR scans", total=cfg.n_scans) as advance:
        for k, pose in enumerate(poses):
            scan = cast_scan(world_meshes, labels, albedo, pose, cfg.lidar, rng_lidar, rgb)
            name = f"scan_{k:02d}.ply"
            write_bytes(out / "lidar" / name, ply_bytes(scan.points_sensor, scan.intensity, scan.colors))
            write_bytes(out / "ground_truth" / "lidar_labels" / f"scan_{k:02d}.npy", _npy_bytes(scan.labels))
            poses_json[name] = _T(pose)
            files.append(f"lidar/{name}")
            gt_lidar.append(
                {
                    "file": f"lidar/{name}",
                    "world_from_sensor": _T(pose),
                    "noise_sigma": cfg.lidar.noise_sigma,
                    "dropout": cfg.lidar.dropout,
                    "grazing_dropout_cos": cfg.lidar.grazing_cos,
                    "n_points": len(scan.points_sensor),
                    "labels": f"ground_truth/lidar_labels/scan_{k:02d}.npy",
                }
            )
            advance()
    write_json(out / "lidar" / "poses.json", poses_json)

    # Photos.
    pc = cfg.photos
    cams = camera_poses(rng_img, pc.n_images)
    with step("rendering photos"):
        model = build_model(
            rng_img, table, [(o.name, o.mesh, o.world_from_object, o.rgb) for o in objects], marker, cams, pc
        )
        imgs = render_photos(model, pc)
    gt_images = []
    for k, (img, world_from_cam) in enumerate(zip(imgs, cams, strict=True)):
        name = f"images/img_{k:03d}.jpg"
        write_bytes(out / name, encode_jpeg(img, pc.jpeg_quality))
        gt_images.append(
            {
                "file": name,
                "cam_from_world": _T(np.linalg.inv(world_from_cam)),
                **pc.intrinsics(),
                "width": pc.width,
                "height": pc.height,
            }
        )

    gt_marker = {
        "dictionary": marker.dictionary,
        "id": marker.marker_id,
        "size": marker.size,
        "sheet_size": marker.sheet,
        "world_from_marker": _T(marker.world_from_marker),
        "corners_world": _T(marker.corners_world()),
        "corners_convention": "cv2.aruco order (top-left, top-right, bottom-right, bottom-left of the print); "
        "marker frame: origin at the centre, x right, y up in the print, z out of the table",
    }
    robot = _write_robot(out, cfg.seed) if cfg.robot else None
    gt: dict[str, Any] = {
        "version": 1,
        "seed": cfg.seed,
        "frame": {
            "up": "+z",
            "units": "m",
            "note": "world frame: table top surface at z = 0, objects rest on it",
        },
        "objects": gt_objects,
        "table": {
            "size": list(TABLE_SIZE),
            "top_height": 0.0,
            "world_from_table": _T(_world_from_table()),
            "note": "a box of extents size centred at world_from_table; its top face is z = 0",
            "floor_height": FLOOR_Z,
        },
        "lidar": gt_lidar,
        "images": gt_images,
        "marker": gt_marker,
    }
    if robot is not None:
        gt["robot"] = robot
    write_session(out, session_tables(files, gt_marker, robot), gt)
    return gt


def generate(cfg: SampleGenCfg) -> dict[str, Any]:
    """Generate the sample session into ``cfg.out_dir`` atomically; returns the ground truth."""
    from real2sim.atomic import output_dir

    cfg.validate()
    with output_dir(cfg.out_dir) as tmp:
        return generate_into(tmp, cfg)
