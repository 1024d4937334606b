"""Where the collision stage spends its time, per mesh of the export benchmark (``bench_export.py``'s meshes).

For each mesh: the repaired watertight mesh through ``collision_geometry`` (cache off) under cProfile, its wall and
CPU time, and the cumulative time of each step (CoACD, the fidelity measures, refinement, merging, cover, ...), so
the shares show what to make cheaper (docs/speed.md, "Export"). Pieces and Hausdorff (2,000 samples) are printed
so a faster setting can be checked against the same run.

    python benchmarks/profile_collision.py [--only a,b] [--threads N]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from export_inputs import base_at_zero, cpu_seconds, meshes  # noqa: E402 (this folder is on sys.path)

STEPS = {
    "coacd": ("coacd.py", "coacd_parts"),
    "decimate": ("visual.py", "decimate"),
    "refiner setup": ("refine.py", "__init__"),
    "primitive fit": ("primitives.py", "fit_primitive"),
    "primitive vs hulls (Hausdorff)": ("geometry.py", "hausdorff"),
    "refine": ("refine.py", "refine"),
    "merge to tolerance": ("refine.py", "merge_to_tolerance"),
    "cover": ("cover.py", "cover_surface"),
    "of which bloat": ("refine.py", "bloat"),
    "of which split (manifold)": ("refine.py", "split"),
    "of which limit_points": ("hulls.py", "limit_points"),
}
"""Step -> (file, function) whose cumulative time stands for it (nested steps overlap: "of which" rows)."""


def profile_one(mesh, threads: int) -> dict:
    from real2sim.export.collision.fidelity import hull_fidelity
    from real2sim.export.collision.geometry import collision_geometry
    from real2sim.export.config import ExportCfg

    cfg = ExportCfg(workers=1, cache=False)
    prof = cProfile.Profile(time.process_time)  # CPU seconds: the machine is shared
    t0, c0 = time.perf_counter(), cpu_seconds()
    prof.enable()
    col = collision_geometry(mesh, cfg, threads)
    prof.disable()
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    steps = dict.fromkeys(STEPS, 0.0)
    for (path, _line, func), (_cc, _nc, _tt, ct, _callers) in stats.items():
        for step, (file, name) in STEPS.items():
            if func == name and path.endswith(file):
                steps[step] += ct
    pieces = col.meshes()
    h = hull_fidelity(mesh, pieces, samples=2000).hausdorff * 1e3
    kind = col.primitive.kind if col.primitive is not None else f"{len(col.hulls)} hulls"
    return {"wall": wall, "cpu": cpu, "steps": steps, "kind": kind, "hausdorff_mm": h}


def main(argv: list[str] | None = None) -> int:
    from real2sim.export.objects.repair import repair_mesh

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma list of mesh names (default: all)")
    ap.add_argument("--threads", type=int, default=1, help="CoACD OpenMP threads")
    a = ap.parse_args(argv)
    only = set(filter(None, a.only.split(",")))
    import open3d  # noqa: F401  (before CoACD)

    for name, mesh in meshes(False):
        if only and name not in only:
            continue
        ref = repair_mesh(base_at_zero(mesh), name).mesh
        r = profile_one(ref, a.threads)
        steps = ", ".join(f"{k} {v:.2f}" for k, v in r["steps"].items() if v > 0.005)
        print(
            f"{name}: {r['kind']}, Hausdorff {r['hausdorff_mm']:.2f} mm, wall {r['wall']:.2f} s, "
            f"cpu {r['cpu']:.2f} s; {steps}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
