"""Benchmark: a Gaussian splat → one solid object, real2sim beside plain Open3D meshers on the opaque centres.

Every mesh is scored against all opaque Gaussians (opacity >= the cleaner's ``min_opacity``; kept or not), in the
scene frame of real2sim's result, at 2 % of the mesh's height (``recon.splat_score``): coverage (centres inside the
solid or within the tolerance of its surface), on-surface share, precision (surface samples near an opaque
centre), genus, watertightness, volume over the convex hull's, and the time.

    python benchmarks/bench_splat.py                  # the toy-cat splat
    python benchmarks/bench_splat.py --json out.json
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
CAT = ROOT.parent / "shared" / "data" / "splats" / "toy_cat_3dgs.ply"


def _o3d_cloud(points: np.ndarray, k: int = 16):
    import open3d as o3d

    pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
    pc.estimate_normals(o3d.geometry.KDTreeSearchParamKNN(k))
    pc.orient_normals_consistent_tangent_plane(k)
    return pc


def _trimesh(om):
    import trimesh

    m = trimesh.Trimesh(np.asarray(om.vertices), np.asarray(om.triangles), process=True)
    if m.is_watertight and m.volume < 0:
        m.invert()
    return m


def plain_poisson(points: np.ndarray, depth: int = 8):
    """Open3D screened Poisson (default options, ``depth``) on the centres, normals from 16 neighbours oriented
    by the consistent tangent plane."""
    import open3d as o3d

    om, _ = o3d.geometry.TriangleMesh.create_from_point_cloud_poisson(_o3d_cloud(points), depth=depth)
    return _trimesh(om)


def plain_alpha(points: np.ndarray, alpha_frac: float = 0.05):
    """Open3D alpha shape of the centres, alpha ``alpha_frac`` of the largest extent."""
    import open3d as o3d

    pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
    alpha = alpha_frac * float(np.ptp(points, axis=0).max())
    return _trimesh(o3d.geometry.TriangleMesh.create_from_point_cloud_alpha_shape(pc, alpha))


def _row(method: str, mesh, centres: np.ndarray, seconds: float) -> dict:
    from real2sim.recon.splats.score import score_solid

    if len(mesh.faces) == 0:  # the mesher gave nothing
        return {"method": method, "seconds": round(seconds, 2), "coverage": 0.0, "on_surface": 0.0, "precision": 0.0,
                "genus": None, "watertight": False, "hull_ratio": None, "triangles": 0}  # fmt: skip
    sc = score_solid(mesh, centres)
    return {
        "method": method,
        "seconds": round(seconds, 2),
        "coverage": round(sc.coverage, 4),
        "on_surface": round(sc.on_surface, 4),
        "precision": round(sc.precision, 4),
        "genus": sc.genus if sc.watertight else None,
        "watertight": sc.watertight,
        "hull_ratio": round(sc.hull_ratio, 3) if sc.watertight else None,
        "triangles": len(mesh.faces),
    }


def run(path: Path) -> list[dict]:
    from real2sim.recon.splats.clean import SplatCleanCfg
    from real2sim.recon.splats.run import SplatReconCfg, run_recon_splat

    t0 = time.perf_counter()
    res = run_recon_splat(SplatReconCfg(input=path, object_only=True))
    t_ours = time.perf_counter() - t0
    w = res.world_from_splat
    splat = res.splat  # the splat as read, not read again
    opaque = splat.means[splat.opacities >= SplatCleanCfg().min_opacity] @ w[:3, :3].T + w[:3, 3]
    rows = [_row("real2sim recon splat --object-only", res.scene.objects[0].mesh_in_world(), opaque, t_ours)]
    for name, fn in (("plain Open3D Poisson (depth 8) on opaque centres", plain_poisson),
                     ("plain Open3D alpha shape (5 % of extent) on opaque centres", plain_alpha)):  # fmt: skip
        t0 = time.perf_counter()
        mesh = fn(opaque)
        rows.append(_row(name, mesh, opaque, time.perf_counter() - t0))
    for r in rows:
        r.update(dataset=path.stem, opaque_gaussians=len(opaque), gaussians=len(splat))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splat", type=Path, default=CAT)
    ap.add_argument("--quick", action="store_true", help="the same run (one splat is already quick)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    rows = run(a.splat)
    for r in rows:
        print(f"{r['method']:60s} {r['seconds']:6.1f} s  coverage {r['coverage']:.3f}  on-surface {r['on_surface']:.3f}"
              f"  precision {r['precision']:.3f}  genus {r['genus']}  watertight {r['watertight']}"
              f"  volume/hull {r['hull_ratio']}")  # fmt: skip
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
