"""Point-cloud reconstruction benchmark: seconds per stage (wall, and CPU of the whole process) on the real scans and
on a ray-cast synthetic 300k-point tabletop, beside a plain Open3D baseline (RANSAC plane + DBSCAN + Poisson per
cluster) on the same input in the same run; then the per-object accuracy on ``sample_data`` against its truth.

    python benchmarks/bench_recon.py [--quick] [--out benchmarks/results/recon.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data" / "pointclouds"


def synthetic_tabletop(n: int, seed: int = 0) -> np.ndarray:
    """A ray-cast scan (``tests.helpers.synthetic_scan.tabletop``): a 1.2 x 0.8 m table with two boxes and two
    cylinders seen by one sensor looking down at 45 degrees, ``n`` points in the sensor frame, 1 mm range noise."""
    from tests.helpers.synthetic_scan import tabletop

    return tabletop(n, seed=seed)[0].points


def ours(points: np.ndarray, name: str, quick: bool = False) -> dict:
    from real2sim.recon.io import PointCloud
    from real2sim.recon.pointcloud.config import PointCloudReconCfg
    from real2sim.recon.pointcloud.scene import points_to_scene

    t: dict[str, float] = {}
    t0 = time.perf_counter()
    c0 = time.process_time()
    out = points_to_scene(PointCloud(points, sensor_origin=np.zeros(3)), PointCloudReconCfg(mesh_max_cells=40 if quick else 100), input_name=name,
                          timings=t)  # fmt: skip
    t["total"] = time.perf_counter() - t0
    t["cpu"] = time.process_time() - c0
    t["objects"] = len(out.scene.objects)
    t["watertight"] = all(o.mesh.is_watertight for o in out.scene.objects)
    return t


def baseline(points: np.ndarray) -> dict:
    import open3d as o3d

    o3d.utility.random.seed(0)
    t: dict[str, float] = {}
    t0 = time.perf_counter()
    c0 = time.process_time()
    pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
    model, inl = pc.segment_plane(0.01, 3, 1000)
    t["support"] = time.perf_counter() - t0
    rest = pc.select_by_index(inl, invert=True)
    n = np.asarray(model[:3])
    d = np.asarray(rest.points) @ n + model[3]
    rest = rest.select_by_index(np.flatnonzero(np.abs(d) > 0.01))
    lab = np.asarray(rest.cluster_dbscan(eps=0.015, min_points=10))
    t["segment"] = time.perf_counter() - t0 - t["support"]
    good = [k for k in range(lab.max() + 1) if (lab == k).sum() >= 200]
    wt = []
    for k in good:
        c = rest.select_by_index(np.flatnonzero(lab == k))
        c.estimate_normals(o3d.geometry.KDTreeSearchParamHybrid(radius=0.015, max_nn=30))
        c.orient_normals_towards_camera_location(np.zeros(3))
        m, _ = o3d.geometry.TriangleMesh.create_from_point_cloud_poisson(c, depth=8)
        wt.append(m.is_watertight())
    t["mesh"] = time.perf_counter() - t0 - t["support"] - t["segment"]
    t["total"] = time.perf_counter() - t0
    t["cpu"] = time.process_time() - c0
    t["objects"] = len(good)
    t["watertight"] = all(wt) if wt else False
    return t


def sample_accuracy() -> list[dict]:
    """Per ground-truth object of ``sample_data``: two-way mean Chamfer [mm] and volume error [%] of the
    reconstruction from the three LiDAR scans with their poses (objects matched by centroid)."""
    from real2sim.recon.pointcloud.run import PointCloudReconCfg, run_recon_pointcloud
    from tests.helpers.accuracy import chamfer_distance, match_by_centroid, true_objects

    sample = ROOT / "sample_data"
    gt = json.loads((sample / "ground_truth.json").read_text())
    t0, c0 = time.perf_counter(), time.process_time()
    out = run_recon_pointcloud(PointCloudReconCfg(inputs=tuple(sample / d["file"] for d in gt["lidar"]),
                                                  poses=sample / "lidar" / "poses.json"))  # fmt: skip
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    truth = true_objects(sample)
    recs = [o.mesh_in_world() for o in out.scene.objects]
    rows = []
    for i, j in match_by_centroid(truth, recs):
        name, vol = truth[i].name, truth[i].volume
        ch = chamfer_distance(truth[i].mesh, recs[j])
        rows.append({"object": name, "chamfer_mm": round(1000 * ch, 2),
                     "volume_error_pct": round(100 * (recs[j].volume - vol) / vol, 1),
                     "faces": len(recs[j].faces), "watertight": bool(recs[j].is_watertight)})  # fmt: skip
    rows.append({"object": "(total)", "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="CI smoke: small synthetic cloud, no real scans")
    ap.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = ap.parse_args()
    import open3d  # noqa: F401  (import cost outside the timings)

    from real2sim.recon.io import read_points

    cases: list[tuple[str, np.ndarray]] = [("synthetic_30k" if args.quick else "synthetic_300k",
                                            synthetic_tabletop(30_000 if args.quick else 300_000))]  # fmt: skip
    if not args.quick and SHARED.is_dir():
        for f in (
            "osd_tabletop/test0.pcd",
            "osd_tabletop/test36.pcd",
            "pcl_mug/table_scene_mug_stereo_textured.pcd",
        ):
            t0 = time.perf_counter()
            c = read_points(SHARED / f)
            cases.append((f"{Path(f).stem} (read {time.perf_counter() - t0:.2f}s)", c.points[c.valid_mask()]))
    rows = []
    for name, pts in cases:
        rows.append(
            {
                "input": name,
                "points": len(pts),
                "real2sim": ours(pts, name, args.quick),
                "open3d_baseline": baseline(pts),
            }
        )
    from rich.console import Console
    from rich.table import Table

    tab = Table(title="point-cloud recon: seconds per stage (real2sim | Open3D baseline)")
    for col in ("input", "points", "support", "segment", "mesh", "total", "cpu", "objects", "watertight"):
        tab.add_column(col)
    for r in rows:
        a, b = r["real2sim"], r["open3d_baseline"]
        cells = [
            f"{a.get(k, 0):.2f} | {b.get(k, 0):.2f}" for k in ("support", "segment", "mesh", "total", "cpu")
        ]
        tab.add_row(r["input"], str(r["points"]), *cells, f"{a['objects']} | {b['objects']}",
                    f"{a['watertight']} | {b['watertight']}")  # fmt: skip
    Console().print(tab)
    result: dict = {"cases": rows}
    if not args.quick and (ROOT / "sample_data" / "ground_truth.json").is_file():
        result["sample_data"] = acc = sample_accuracy()
        Console().print("sample_data objects (targets: Chamfer <= 2 mm, |volume error| <= 5 %):")
        for r in acc:
            Console().print("  " + ", ".join(f"{k}={v}" for k, v in r.items()))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
