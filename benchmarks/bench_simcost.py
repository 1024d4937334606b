"""Benchmark: what the exported real scenes cost to simulate, beside their collision fidelity.

For each real scene (the sample tabletop's lidar scans, the OSD test0/12/36 Kinect scans, the bunny), real2sim
exports the package, then the same scene is stepped with obj2mjcf's collision hulls of the same meshes in place of
ours (same bodies, poses, masses, contact settings: only the collision geoms differ). Each model rests 5 s from its
``home`` keyframe: mean contacts a step and MuJoCo step time (wall, best of ``--repeat``), with each object's
collision-to-surface Hausdorff distance and its fidelity to the capture (``capture_fidelity``: the labelled sensor
points' distance to the collision surface; for the sample tabletop also the Hausdorff to the true objects). The
sample tabletop's ground-truth meshes at their true poses (``sample_data/ground_truth.json``: a box and a cylinder
primitive, the mug and stone) are the floor.

Each object of several pieces meets the support through its support-contact hull (``export.collision.support_contact``);
row ``r2s-shull``: the same package with those hulls taken out (every piece touches the support). ``x peer``: step
time against obj2mjcf's in the same scene; ``x peer=``: against obj2mjcf at our fidelity (row ``obj2mjcf=``: per
object, the CoACD threshold of fewest hulls still as close to the mesh as ours, ``iso_fidelity``). With the peer, each
object of more than 8 hulls says why (its Hausdorff at 8 hulls against obj2mjcf's, ``bench_export.why_hulls``).
``--quick``: the ground-truth sample tabletop only, ours only (CI smoke). obj2mjcf: ``pip install obj2mjcf``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import trimesh
from peer_hulls import fidelity, peer_hulls

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this checkout's real2sim, not an installed one
SHARED = ROOT.parent / "shared" / "data"
if not SHARED.is_dir():
    SHARED = Path("/work/shared/data")


def gt_scene():
    """The sample tabletop from its ground truth: true meshes at true poses on the table plane."""
    from real2sim.scene import Scene, SceneObject, Support

    gt = json.loads((ROOT / "sample_data" / "ground_truth.json").read_text())
    objs = tuple(
        SceneObject(
            o["name"],
            trimesh.load(ROOT / "sample_data" / o["mesh"], process=False),
            np.asarray(o["world_from_object"], dtype=np.float64),
            density=float(o["density"]),
        )
        for o in gt["objects"]
    )
    return Scene(Support(size=(1.2, 0.8)), objs)


def recon_scene(inputs: list[Path], poses: Path | None = None):
    from real2sim.recon.pointcloud.config import PointCloudReconCfg
    from real2sim.recon.pointcloud.run import run_recon_pointcloud

    return run_recon_pointcloud(PointCloudReconCfg(inputs=tuple(inputs), poses=poses)).scene


def scenes(quick: bool) -> list[tuple[str, object]]:
    out = [("sample_ground_truth", gt_scene)]
    if quick:
        return out
    lidar = ROOT / "sample_data" / "lidar"
    scans = sorted(lidar.glob("scan_*.ply"))
    out.insert(0, ("sample_tabletop", lambda: recon_scene(scans, lidar / "poses.json")))
    osd = SHARED / "pointclouds" / "osd_tabletop"
    for k in (0, 12, 36):
        if (osd / f"test{k}.pcd").is_file():
            out.append((f"osd_test{k}", lambda k=k: recon_scene([osd / f"test{k}.pcd"])))
    bunny = SHARED / "pointclouds" / "bunny_scans" / "reference_bun_zipper_res2.ply"
    if bunny.is_file():
        out.append(("bunny", lambda: bunny_scene(bunny)))
    return out


def bunny_scene(path: Path):
    from real2sim.scene import Scene, SceneObject, Support

    m = trimesh.load(path, process=False)
    m.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))  # the scan is y-up
    m.apply_translation(-np.array([*m.bounds.mean(axis=0)[:2], m.bounds[0][2]]))
    return Scene(Support(size=(1.0, 1.0)), (SceneObject("bunny", m),))


def _without_support_hulls(spec) -> None:
    """Delete the support-contact hulls (``support_contact.GROUP``) and give every collision geom MuJoCo's default
    classes: each piece touches the support, as in a package without them (and obj2mjcf's)."""
    from real2sim.export.collision.support_contact import GROUP

    for g in list(spec.geoms):
        if g.group == GROUP:
            spec.delete(g)
        elif g.group == 3:
            g.contype, g.conaffinity = 1, 1


def with_peer_collision(pkg: Path, hulls: dict[str, list[trimesh.Trimesh]]):
    """Our package's scene with each object's collision geoms (group 3) replaced by ``hulls`` (object frame), and no
    support-contact hulls (obj2mjcf writes none)."""
    import mujoco

    spec = mujoco.MjSpec.from_file(str(pkg / "scene.xml"))
    _without_support_hulls(spec)
    for body, hs in hulls.items():
        b = spec.body(body)
        cols = [g for g in b.geoms if g.group == 3]
        proto = cols[0]
        friction, solref, solimp = list(proto.friction), list(proto.solref), list(proto.solimp)
        cond, ctype, caff = proto.condim, proto.contype, proto.conaffinity
        for g in cols:
            spec.delete(g)
        for i, h in enumerate(hs):
            mname = f"peer_{body}_{i}"
            spec.add_mesh(name=mname, uservert=h.vertices.ravel().tolist(), userface=h.faces.ravel().tolist())
            g = b.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname=mname, group=3)
            g.friction, g.solref, g.solimp = friction, solref, solimp
            g.condim, g.contype, g.conaffinity = cond, ctype, caff
            g.mass = 0  # the body's inertial stays ours (same masses in both)
    return spec.compile()


def without_support_hull(pkg: Path):
    """Our scene as it was before support-contact hulls: every collision piece touches the support."""
    import mujoco

    spec = mujoco.MjSpec.from_file(str(pkg / "scene.xml"))
    _without_support_hulls(spec)
    return spec.compile()


def sim_cost(model, seconds: float = 5.0, repeat: int = 3) -> dict:
    """Mean contacts a step and wall time a step (best of ``repeat`` runs) over a ``seconds`` rest from ``home``."""
    import mujoco

    steps = int(round(seconds / model.opt.timestep))
    best, ncon = float("inf"), 0.0
    for _ in range(repeat):
        data = mujoco.MjData(model)
        key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, "home")
        if key >= 0:
            mujoco.mj_resetDataKeyframe(model, data, key)
        n = 0
        t0 = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(model, data)
            n += data.ncon
        best = min(best, time.perf_counter() - t0)
        ncon = n / steps
    return {"contacts": ncon, "step_us": best / steps * 1e6, "geoms": int(model.ngeom)}


def run(
    name: str, make, work: Path, peer: bool, timeout: float, repeat: int, peer_dir: Path | None
) -> list[dict]:
    import mujoco

    from real2sim.export.config import ExportCfg
    from real2sim.export.package import export_scene
    from real2sim.scene import sanitize_name

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_export import package_collision
    from capture_fidelity import capture_figures
    from iso_fidelity import iso_fidelity_hulls

    scene = make()
    pkg = work / f"pkg_{name}"  # not the name of an object (the model name would take it)
    export_scene(scene, pkg, ExportCfg(workers=1, render=False, cache=False))
    model = mujoco.MjModel.from_xml_path(str(pkg / "scene.xml"))
    bodies = {o.name: sanitize_name(o.name) for o in scene.objects}
    ours = sim_cost(model, repeat=repeat)
    kinds = [package_collision(pkg, bodies[o.name]) for o in scene.objects]
    pieces = [k if k != "hulls" else f"{len(ms)} hulls" for ms, k in kinds]
    fid = fidelity(scene, lambda o: package_collision(pkg, bodies[o.name])[0])
    rows = [{"scene": name, "tool": "real2sim", **ours, "pieces": pieces, "hausdorff_mm": fid}]
    rows[0].update(
        capture_figures(name, scene, lambda o: package_collision(pkg, bodies[o.name])[0], ROOT, SHARED)
    )
    sh = sim_cost(without_support_hull(pkg), repeat=repeat)
    rows.append({**rows[0], "tool": "r2s-shull", **sh})
    if peer:
        hulls = {
            bodies[o.name]: peer_hulls(name, bodies[o.name], o.mesh, peer_dir or work, timeout)
            for o in scene.objects
        }
        if all(h is not None for h in hulls.values()):
            pm = with_peer_collision(pkg, hulls)
            fid = fidelity(scene, lambda o: hulls[bodies[o.name]])
            pieces = [f"{len(h)} hulls" for h in hulls.values()]
            rows.append({"scene": name, "tool": "obj2mjcf", **sim_cost(pm, repeat=repeat), "pieces": pieces})
            rows[-1]["hausdorff_mm"] = fid
            rows[-1].update(capture_figures(name, scene, lambda o: hulls[bodies[o.name]], ROOT, SHARED))
            iso = iso_fidelity_hulls(
                name, scene, rows[0]["hausdorff_mm"], hulls, fid, peer_dir or work, timeout
            )
            pieces = [
                f"{len(h)} hulls (t {t:g})"
                for h, t in zip(iso["hulls"].values(), iso["threshold"], strict=True)
            ]
            rows.append({"scene": name, "tool": "obj2mjcf=", **sim_cost(with_peer_collision(pkg, iso["hulls"]), repeat=repeat),
                         "pieces": pieces, "hausdorff_mm": iso["hausdorff_mm"]})  # fmt: skip
        else:
            rows.append({"scene": name, "tool": "obj2mjcf", "note": f"failed or over {timeout:.0f} s"})
    if peer:  # the full run (not --quick): each object of over 8 hulls says why
        default = next(r for r in rows if r["tool"] == "obj2mjcf")
        rows[0]["hulls_why"] = hulls_why(scene, rows[0], default.get("hausdorff_mm"))
    return rows


def hulls_why(scene, ours: dict, peer_mm: list[float] | None) -> list[str]:
    """For each object of more than ``bench_export.FEW_HULLS`` hulls, why (``bench_export.why_hulls``: the same
    collision step capped at that many hulls, its Hausdorff against obj2mjcf's on the object, else the tolerance's)."""
    from bench_export import why_hulls

    from real2sim.export.objects.repair import repair_mesh

    out = []
    for i, (o, piece) in enumerate(zip(scene.objects, ours["pieces"], strict=True)):
        if not piece.endswith(" hulls"):
            continue
        row = {"kind": "hulls", "hulls": int(piece.split()[0])}
        why_hulls(row, repair_mesh(o.mesh, o.name).mesh, {"hausdorff_mm": peer_mm[i]} if peer_mm else None)
        if "hulls_why" in row:
            out.append(f"{o.name}: {row['hulls_why']}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="ground-truth sample tabletop only, no peer (CI)")
    ap.add_argument("--no-peer", action="store_true", help="skip obj2mjcf")
    ap.add_argument("--only", default="", help="comma list of scene names to run")
    ap.add_argument("--peer-timeout", type=float, default=300.0, help="obj2mjcf timeout per mesh [s]")
    ap.add_argument("--repeat", type=int, default=3, help="timed rests per model (best counts)")
    ap.add_argument("--json", type=Path, help="write the rows here")
    ap.add_argument(
        "--peer-dir", type=Path, help="keep obj2mjcf's hulls here and reuse them (same mesh hash)"
    )
    a = ap.parse_args(argv)
    peer = not (a.quick or a.no_peer)
    if peer and not (shutil.which("obj2mjcf") or (Path(sys.executable).parent / "obj2mjcf").exists()):
        print("obj2mjcf not installed (pip install obj2mjcf): peer skipped", file=sys.stderr)
        peer = False
    only = {s for s in a.only.split(",") if s}
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in scenes(a.quick):
            if not only or name in only:
                rows += run(
                    name, make, Path(tmp), peer, a.peer_timeout, 1 if a.quick else a.repeat, a.peer_dir
                )
    floor = next((r for r in rows if r["scene"] == "sample_ground_truth"), None)
    peer_us = {r["scene"]: r["step_us"] for r in rows if r["tool"] == "obj2mjcf" and "step_us" in r}
    iso_us = {r["scene"]: r["step_us"] for r in rows if r["tool"] == "obj2mjcf=" and "step_us" in r}
    print(
        f"{'scene':22} {'tool':9} {'contacts':>8} {'step us':>8} {'x floor':>7} {'x peer':>6} {'x peer=':>7}  "
        "pieces | Hausdorff mm"
    )
    for r in rows:
        if "step_us" not in r:
            print(f"{r['scene']:22} {r['tool']:9} {r.get('note', '')}")
            continue
        x = r["step_us"] / floor["step_us"] if floor else float("nan")
        xp = r["step_us"] / peer_us.get(r["scene"], float("nan"))
        xi = r["step_us"] / iso_us.get(r["scene"], float("nan"))
        haus = " ".join(f"{h:.1f}" for h in r["hausdorff_mm"])
        print(
            f"{r['scene']:22} {r['tool']:9} {r['contacts']:8.1f} {r['step_us']:8.1f} {x:7.2f} {xp:6.2f} {xi:7.2f}  "
            f"{', '.join(r['pieces'])} | {haus}"
        )
        if r.get("capture_mm"):
            cap = "  ".join("-" if c is None else "/".join(f"{x:.1f}" for x in c) for c in r["capture_mm"])
            print(f"{'':22} {'':9} capture mean/p95/max mm: {cap}")
        if r.get("truth_mm"):
            print(
                f"{'':22} {'':9} Hausdorff to the true objects mm: {' '.join(f'{h:.1f}' for h in r['truth_mm'])}"
            )
            mean = " ".join(f"{h:.2f}" for h in r["truth_mean_mm"])
            print(f"{'':22} {'':9} mean distance from the true surfaces mm: {mean}")
        for line in r.get("hulls_why", []):
            print(f"{'':22} {'':9} {line}")
    if a.json:
        a.json.write_text(json.dumps({"rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
