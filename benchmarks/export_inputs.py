"""Inputs and the peer tool of the export benchmark: the benchmark meshes, obj2mjcf + CoACD defaults on one
mesh, and MuJoCo's 5 s rest test of a package (used by ``bench_export.py``)."""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import trimesh

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


def l_block() -> trimesh.Trimesh:
    a = trimesh.creation.box((0.12, 0.04, 0.04))
    b = trimesh.creation.box((0.04, 0.04, 0.10))
    b.apply_translation([0.04, 0.0, 0.07])
    return trimesh.boolean.union([a, b], engine="manifold")


def _osd_objects() -> list[tuple[str, trimesh.Trimesh]]:
    """Object meshes reconstructed from the real OSD test0 Kinect scan (recon's ``run_recon_pointcloud``)."""
    pcd = SHARED / "pointclouds" / "osd_tabletop" / "test0.pcd"
    if not pcd.is_file():
        return []
    from real2sim.recon.pointcloud.config import PointCloudReconCfg
    from real2sim.recon.pointcloud.run import run_recon_pointcloud

    scene = run_recon_pointcloud(PointCloudReconCfg(inputs=(pcd,))).scene
    return [(f"osd_test0_{o.name}", o.mesh) for o in scene.objects]


def meshes(quick: bool) -> list[tuple[str, trimesh.Trimesh]]:
    """(name, mesh) in a z-up object frame."""
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
    out += _osd_objects()
    return out


def base_at_zero(m: trimesh.Trimesh) -> trimesh.Trimesh:
    m = m.copy()
    c = m.bounds.mean(axis=0)
    m.apply_translation([-c[0], -c[1], -m.bounds[0][2]])
    return m


def rest_test(xml: Path, seconds: float = 5.0) -> dict:
    """Drop the peer's model (its free-jointed body, base at z = 0) on a floor plane and step ``seconds``: MuJoCo
    warnings, initial penetration [m] and how far [m] the body moved (the same rest test as ``validate``)."""
    import mujoco

    spec = mujoco.MjSpec.from_file(str(xml))
    floor = spec.worldbody.add_geom()
    floor.type, floor.size, floor.name = mujoco.mjtGeom.mjGEOM_PLANE, [0, 0, 0.05], "bench_floor"
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    pen = max([0.0] + [-float(data.contact[i].dist) for i in range(data.ncon)])
    body = model.nbody - 1
    x0 = data.xpos[body].copy()
    for _ in range(int(round(seconds / model.opt.timestep))):
        mujoco.mj_step(model, data)
    nwarn = int(sum(w.number for w in data.warning))
    drift = float(np.linalg.norm(data.xpos[body] - x0))
    return {
        "warnings": nwarn,
        "penetration_mm": pen * 1e3,
        "drift_mm": drift * 1e3,
        "rests": nwarn == 0 and pen <= 1e-3 and drift < 1e-3,
    }


def run_peer(name: str, mesh: trimesh.Trimesh, ref: trimesh.Trimesh, work: Path, timeout: float) -> dict:
    exe = shutil.which("obj2mjcf") or str(Path(sys.executable).parent / "obj2mjcf")
    d = work / f"peer_{name}"
    d.mkdir(parents=True, exist_ok=True)
    mesh.export(d / f"{name}.obj")
    t0, c0 = time.perf_counter(), cpu_seconds()
    try:
        r = subprocess.run(
            [
                exe,
                "--obj-dir",
                str(d),
                "--decompose",
                "--save-mjcf",
                "--compile-model",
                "--overwrite",
                "--add-free-joint",
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {
            "tool": "obj2mjcf",
            "mesh": name,
            "seconds": timeout,
            "cpu_seconds": float("nan"),
            "timed_out": True,
            "compiles": None,
            "rests": None,
            "note": f"timeout {timeout:.0f} s (counted as >=)",
        }
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    hull_files = sorted((d / name).glob(f"{name}_collision_*.obj"))
    hulls = [trimesh.load(f, process=False, force="mesh") for f in hull_files]
    hulls = [h.convex_hull for h in hulls if len(h.vertices) >= 4]
    out = {
        "tool": "obj2mjcf",
        "mesh": name,
        "seconds": wall,
        "cpu_seconds": cpu,
        "timed_out": False,
        "hulls": len(hulls),
        "kind": "hulls",
        "compiles": r.returncode == 0 and "compiled successfully" in (r.stdout + r.stderr),
        "rests": None,
        "note": "" if r.returncode == 0 else (r.stderr.strip().splitlines() or ["failed"])[-1][:200],
    }
    if r.returncode != 0 or not hulls:  # a run that did not convert the mesh is no timing to compare with
        out["failed"] = True
        print(f"obj2mjcf failed on {name}: {out['note'] or 'no hulls written'}", file=sys.stderr)
    if hulls:
        out.update(max_hull_vertices=max(len(h.vertices) for h in hulls), _hulls=hulls)
    xml = d / name / f"{name}.xml"
    if xml.is_file():
        import mujoco

        try:
            m = mujoco.MjModel.from_xml_path(str(xml))
            out["mass_ratio"] = float(m.body_mass.sum() / (1000.0 * ref.volume))  # its default density 1000
            rt = rest_test(xml)
            out.update(rests=rt["rests"], rest=rt)
        except Exception as exc:
            out["compiles"], out["note"] = False, str(exc).splitlines()[0][:200]
    return out


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (user + system)."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
