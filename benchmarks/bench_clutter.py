"""Clutter segmentation benchmark: on the labelled OSD scans (touching, stacked and cluttered objects), object count
and per-object point IoU against the labels, with the seconds of the whole reconstruction, beside a plain Open3D
baseline (RANSAC plane + DBSCAN on the same scan, same run); then the PCL mug (one concave object: must stay one).

    python benchmarks/bench_clutter.py [--quick] [--out benchmarks/results/clutter.json]

``--quick`` (CI smoke): only OSD ``test21``, without the baseline.
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
OSD = ROOT.parent / "shared" / "data" / "pointclouds" / "osd_tabletop"
MUG = ROOT.parent / "shared" / "data" / "pointclouds" / "pcl_mug" / "table_scene_mug_stereo_textured.pcd"
SCENES = ("test0", "test12", "test36", "test21", "test44", "test56")


def ours(path: Path, **options) -> tuple[np.ndarray, float, int]:
    """real2sim with default options (or ``options``): labels per valid point, seconds, object count."""
    from real2sim.recon.pointcloud.run import PointCloudReconCfg, run_recon_pointcloud

    t0 = time.perf_counter()
    out = run_recon_pointcloud(PointCloudReconCfg(inputs=(path,), **options))
    dt = time.perf_counter() - t0
    return out.point_labels, dt, len(out.scene.objects)


def baseline(points: np.ndarray) -> tuple[np.ndarray, float, int]:
    """Open3D: RANSAC plane (1 cm), DBSCAN (eps 1.5 cm, 10 points) above it, clusters of >= 200 points."""
    import open3d as o3d

    o3d.utility.random.seed(0)
    t0 = time.perf_counter()
    pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
    model, _ = pc.segment_plane(0.01, 3, 1000)
    n = np.asarray(model[:3])
    d = points @ n + model[3]
    d *= -np.sign(np.median(d)) if np.median(d) != 0 else 1.0  # objects on the sensor's side
    above = np.flatnonzero(np.abs(d) > 0.01)
    lab = np.asarray(
        o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points[above])).cluster_dbscan(
            eps=0.015, min_points=10
        )
    )
    labels = np.zeros(len(points), dtype=np.int64)
    good = [k for k in range(lab.max() + 1) if (lab == k).sum() >= 200]
    for new, k in enumerate(good):
        labels[above[lab == k]] = new + 1
    return labels, time.perf_counter() - t0, len(good)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="CI smoke: test21 only, no baseline")
    ap.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    ap.add_argument("--scenes", default=",".join(SCENES), help="comma-separated OSD scenes")
    ap.add_argument(
        "--crop-margin", type=float, default=None, help="override crop_margin [m] (default: the cfg's)"
    )
    args = ap.parse_args()
    options = {} if args.crop_margin is None else {"crop_margin": args.crop_margin}
    if not OSD.is_dir():
        print(f"skipped: {OSD} not present")
        return
    import open3d  # noqa: F401  (import cost outside the timings)

    from real2sim.recon.io import read_points
    from tests.helpers.osd import object_ious, truth_labels

    rows = []
    for scene in ("test21",) if args.quick else args.scenes.split(","):
        cloud = read_points(OSD / f"{scene}.pcd")
        truth = truth_labels(cloud)
        lab, dt, n = ours(OSD / f"{scene}.pcd", **options)
        row = {"scene": scene, "objects_true": int(truth.max())}
        iou = object_ious(truth, lab[cloud.valid_mask()])
        row["real2sim"] = {"objects": n, "min_iou": round(min(iou), 3), "ious": [round(x, 3) for x in iou],
                           "seconds": round(dt, 2)}  # fmt: skip
        if not args.quick:
            blab, bdt, bn = baseline(cloud.points[cloud.valid_mask()])
            biou = object_ious(truth, blab)
            row["open3d_baseline"] = {"objects": bn, "min_iou": round(min(biou), 3),
                                      "ious": [round(x, 3) for x in biou], "seconds": round(bdt, 2)}  # fmt: skip
        rows.append(row)
    result: dict = {"options": options, "osd": rows}
    if not args.quick and MUG.is_file():
        from real2sim.recon.pointcloud.run import PointCloudReconCfg, run_recon_pointcloud

        t0 = time.perf_counter()
        out = run_recon_pointcloud(PointCloudReconCfg(inputs=(MUG,)))
        result["pcl_mug"] = {"objects": len(out.scene.objects), "seconds": round(time.perf_counter() - t0, 2)}
    from rich.console import Console
    from rich.table import Table

    tab = Table(title="clutter segmentation: objects found/true, min object IoU, seconds (real2sim | Open3D)")
    for col in ("scene", "real2sim", "min IoU", "s", "open3d", "min IoU ", "s "):
        tab.add_column(col)
    for r in rows:
        o, b = r["real2sim"], r.get("open3d_baseline", {})
        tab.add_row(r["scene"], f"{o['objects']}/{r['objects_true']}", f"{o['min_iou']:.3f}", f"{o['seconds']:.2f}",
                    f"{b['objects']}/{r['objects_true']}" if b else "-", f"{b['min_iou']:.3f}" if b else "-",
                    f"{b['seconds']:.2f}" if b else "-")  # fmt: skip
    Console().print(tab)
    if "pcl_mug" in result:
        print(f"pcl_mug: {result['pcl_mug']['objects']} object(s), {result['pcl_mug']['seconds']:.2f} s")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
