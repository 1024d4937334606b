"""Benchmark: real2sim export vs obj2mjcf + CoACD defaults on the same meshes.

For each mesh: wall time, hull count, max hull vertices, collision fidelity against the watertight mesh
(symmetric Hausdorff between the mesh surface and the hull union's outer boundary; union volume / mesh volume;
volume IoU) and whether the result compiles and (ours) passes the 5 s rest test. Prints a rich table and writes JSON.

    python benchmarks/bench_export.py [--quick] [--json out.json] [--no-peer]

``--quick``: one small non-convex mesh, for CI (< 30 s). obj2mjcf is run as a subprocess (``pip install obj2mjcf``);
it is skipped with a message only when it is not installed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import trimesh

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SHARED = ROOT.parent / "shared" / "data"


def l_block() -> trimesh.Trimesh:
    a = trimesh.creation.box((0.12, 0.04, 0.04))
    b = trimesh.creation.box((0.04, 0.04, 0.10))
    b.apply_translation([0.04, 0.0, 0.07])
    return trimesh.boolean.union([a, b], engine="manifold")


def meshes(quick: bool) -> list[tuple[str, trimesh.Trimesh]]:
    """(name, mesh) in a z-up object frame with the base at z = 0."""
    out: list[tuple[str, trimesh.Trimesh]] = [("l_block", l_block())]
    if quick:
        return out
    bunny = SHARED / "pointclouds" / "bunny_scans" / "reference_bun_zipper_res2.ply"
    if bunny.is_file():
        m = trimesh.load(bunny, process=False)
        m.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))  # the scan is y-up
        out.append(("bunny_reference", m))
    for p in sorted((ROOT / "sample_data" / "ground_truth" / "meshes").glob("*.ply")):
        out.append((f"sample_{p.stem}", trimesh.load(p, process=False)))
    return out


def _base_at_zero(m: trimesh.Trimesh) -> trimesh.Trimesh:
    m = m.copy()
    c = m.bounds.mean(axis=0)
    m.apply_translation([-c[0], -c[1], -m.bounds[0][2]])
    return m


def run_ours(name: str, mesh: trimesh.Trimesh, work: Path) -> dict:
    from real2sim.export.config import ExportCfg
    from real2sim.export.fidelity import hull_fidelity
    from real2sim.export.package import export_scene
    from real2sim.export.prepare import ObjectJob, prepare_object

    from real2sim.errors import Real2SimError
    from real2sim.scene import Scene, SceneObject, Support

    cfg = ExportCfg(workers=1, cache=False, render=True)
    scene = Scene(Support(), (SceneObject(name, mesh),))
    t0 = time.perf_counter()
    ok, why = True, ""
    try:
        export_scene(scene, work / f"ours_{name}", cfg)
    except Real2SimError as exc:
        ok, why = False, str(exc)
    wall = time.perf_counter() - t0
    prep = prepare_object(ObjectJob(name, name, mesh, 500.0, None, None, cfg))
    hulls = prep.collision.meshes()
    fid = hull_fidelity(prep.watertight, hulls, samples=3000, volume=True)
    kind = prep.collision.primitive.kind if prep.collision.primitive is not None else "hulls"
    return {"tool": "real2sim", "mesh": name, "seconds": wall, "hulls": len(hulls), "kind": kind,
            "max_hull_vertices": max(len(h.vertices) for h in hulls), "hausdorff_mm": fid.hausdorff * 1e3,
            "hausdorff_rel": fid.hausdorff_rel, "volume_ratio": fid.volume_ratio, "iou": fid.iou,
            "compiles": ok or "mjcf compiles" not in why, "rests": ok, "note": why[:200],
            "_ref": prep.watertight}


def run_peer(name: str, mesh: trimesh.Trimesh, ref: trimesh.Trimesh, work: Path, timeout: float) -> dict:
    from real2sim.export.fidelity import hull_fidelity

    exe = shutil.which("obj2mjcf") or str(Path(sys.executable).parent / "obj2mjcf")
    d = work / f"peer_{name}"
    d.mkdir(parents=True, exist_ok=True)
    mesh.export(d / f"{name}.obj")
    t0 = time.perf_counter()
    try:
        r = subprocess.run([exe, "--obj-dir", str(d), "--decompose", "--save-mjcf", "--compile-model", "--overwrite"],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"tool": "obj2mjcf", "mesh": name, "seconds": float("nan"), "note": f"timeout {timeout:.0f} s"}
    wall = time.perf_counter() - t0
    hull_files = sorted((d / name).glob(f"{name}_collision_*.obj"))
    hulls = [trimesh.load(f, process=False, force="mesh") for f in hull_files]
    hulls = [h.convex_hull for h in hulls if len(h.vertices) >= 4]
    out = {"tool": "obj2mjcf", "mesh": name, "seconds": wall, "hulls": len(hulls), "kind": "hulls",
           "compiles": r.returncode == 0 and "compiled successfully" in (r.stdout + r.stderr), "rests": None,
           "note": "" if r.returncode == 0 else (r.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    if hulls:
        fid = hull_fidelity(ref, hulls, samples=3000, volume=True)
        out.update(max_hull_vertices=max(len(h.vertices) for h in hulls), hausdorff_mm=fid.hausdorff * 1e3,
                   hausdorff_rel=fid.hausdorff_rel, volume_ratio=fid.volume_ratio, iou=fid.iou)
    xml = d / name / f"{name}.xml"
    if xml.is_file():
        import mujoco

        try:
            m = mujoco.MjModel.from_xml_path(str(xml))
            out["mass_ratio"] = float(m.body_mass.sum() / (1000.0 * ref.volume))  # its default density 1000
        except Exception as exc:
            out["compiles"], out["note"] = False, str(exc).splitlines()[0][:200]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one small mesh (CI smoke, < 30 s)")
    ap.add_argument("--json", type=Path, default=None, help="write results here")
    ap.add_argument("--no-peer", action="store_true", help="skip obj2mjcf")
    ap.add_argument("--peer-timeout", type=float, default=600.0)
    a = ap.parse_args(argv)
    os.environ.setdefault("MUJOCO_GL", "egl")
    peer = not a.no_peer
    if peer and not (shutil.which("obj2mjcf") or (Path(sys.executable).parent / "obj2mjcf").exists()):
        print("obj2mjcf not installed (pip install obj2mjcf): peer skipped", file=sys.stderr)
        peer = False
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()  # imports + first export in this process, reported apart from per-object times
        run_ours("warmup", _base_at_zero(trimesh.creation.box((0.05, 0.05, 0.05))), Path(tmp))
        cold = time.perf_counter() - t0
        for name, mesh in meshes(a.quick):
            mesh = _base_at_zero(mesh)
            ours = run_ours(name, mesh, Path(tmp))
            ref = ours.pop("_ref")
            rows.append(ours)
            if peer:
                rows.append(run_peer(name, mesh, ref, Path(tmp), a.peer_timeout))
    ours_t = [r["seconds"] for r in rows if r["tool"] == "real2sim"]
    summary = {"median_seconds_real2sim": statistics.median(ours_t), "cold_start_seconds_real2sim": cold}
    peer_t = [r["seconds"] for r in rows if r["tool"] == "obj2mjcf" and np.isfinite(r["seconds"])]
    if peer_t:
        summary["median_seconds_obj2mjcf"] = statistics.median(peer_t)
        summary["speedup_median"] = summary["median_seconds_obj2mjcf"] / summary["median_seconds_real2sim"]
    _table(rows, summary)
    if a.json:
        a.json.write_text(json.dumps({"rows": rows, "summary": summary}, indent=2, default=float) + "\n")
    return 0 if all(r.get("rests") for r in rows if r["tool"] == "real2sim") else 1


def _table(rows: list[dict], summary: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="export benchmark (fidelity vs the watertight mesh)")
    for c in ("mesh", "tool", "time [s]", "hulls", "max verts", "Hausdorff [mm]", "H/diag", "vol ratio", "IoU",
              "compiles", "rests 5 s"):
        t.add_column(c)

    def f(x, fmt):
        return "-" if x is None or (isinstance(x, float) and not np.isfinite(x)) else format(x, fmt)

    for r in rows:
        t.add_row(r["mesh"], r["tool"], f(r.get("seconds"), ".2f"), f"{r.get('hulls', '-')}"
                  + (f" ({r['kind']})" if r.get("kind") not in (None, "hulls") else ""),
                  f"{r.get('max_hull_vertices', '-')}", f(r.get("hausdorff_mm"), ".2f"), f(r.get("hausdorff_rel"), ".3f"),
                  f(r.get("volume_ratio"), ".3f"), f(r.get("iou"), ".3f"), str(r.get("compiles", "-")),
                  str(r.get("rests", "-")))
    c = Console(width=160)
    c.print(t)
    c.print(summary)


if __name__ == "__main__":
    sys.exit(main())
