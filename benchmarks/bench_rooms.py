"""Room benchmark: on the real Kinect room frames (PCL office, PCL grabber), seconds for the room detection (the
plane search that finds floor and walls) and for the whole reconstruction, and the support's angle to the
reference floor (``tests/helpers/floor_reference.py``), beside a plain Open3D baseline (``segment_plane`` on the
largest plane) on the same input in the same run.

    python benchmarks/bench_rooms.py [--out benchmarks/results/rooms.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data" / "pointclouds"
GRABBER = "pcl_grabber/frame_20121214T142255.814212.pcd"


def ours(cloud, name: str) -> dict:
    from real2sim.recon.pointcloud.config import PointCloudReconCfg
    from real2sim.recon.pointcloud.scene import points_to_scene
    from real2sim.recon.rooms.planes import detect_room

    t: dict = {}
    t0 = time.perf_counter()
    detect_room(cloud.points[cloud.valid_mask()], np.zeros(3), None, 0)
    t["room_detection"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = points_to_scene(cloud, PointCloudReconCfg(), input_name=name)
    t["total"] = time.perf_counter() - t0
    t["normal"] = (np.linalg.inv(out.world_from_input)[:3, :3] @ [0.0, 0.0, 1.0]).tolist()
    roles = [o.role for o in out.scene.objects]
    t["route"] = "room" if any(o.name.startswith("wall") for o in out.scene.objects) else "tabletop"
    t["dynamic"], t["static"] = roles.count("dynamic"), roles.count("static")
    return t


def baseline(points: np.ndarray) -> dict:
    import open3d as o3d

    o3d.utility.random.seed(0)
    t0 = time.perf_counter()
    pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
    model, _ = pc.segment_plane(0.02, 3, 1000)
    return {
        "total": time.perf_counter() - t0,
        "normal": list(np.asarray(model[:3]) / np.linalg.norm(model[:3])),
    }


def main(argv: list[str] | None = None) -> int:
    from real2sim.recon.io import read_points
    from tests.helpers.floor_reference import (
        GRABBER_FLOOR_WINDOW,
        OFFICE_FLOOR_WINDOW,
        angle_deg,
        reference_floor,
    )

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    baseline(np.random.default_rng(0).random((100, 3)))  # imports and thread pools warm before any timing
    cases = [("pcl_office/office1.pcd", OFFICE_FLOOR_WINDOW, 0.04), (GRABBER, GRABBER_FLOOR_WINDOW, 0.02)]
    rows = []
    for rel, window, band in cases:
        cloud = replace(read_points(SHARED / rel), sensor_origin=np.zeros(3))
        ref = reference_floor(cloud, window, band)
        r = ours(cloud, Path(rel).name)
        b = baseline(cloud.points[cloud.valid_mask()])
        for d in (r, b):
            d["floor_angle_deg"] = round(angle_deg(np.asarray(d.pop("normal")), ref), 3)
        rows.append(
            {"scan": rel, "points": int(cloud.valid_mask().sum()), "real2sim": r, "open3d_baseline": b}
        )
        print(
            f"{rel}: real2sim {r['route']} route {r['total']:.2f} s (room detection {r['room_detection']:.2f} s), "
            f"floor {r['floor_angle_deg']:.2f} deg, {r['dynamic']} dynamic / {r['static']} static; "
            f"open3d segment_plane {b['total']:.2f} s, largest plane {b['floor_angle_deg']:.2f} deg from the floor"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"cases": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
