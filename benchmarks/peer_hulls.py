"""obj2mjcf's collision hulls of a mesh (CoACD defaults or a given concavity threshold), cached by the mesh's
hash, and the collision-to-surface Hausdorff of any object's collision meshes: shared by ``bench_simcost`` and
``iso_fidelity``."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import trimesh


def peer_hulls(
    scene: str, name: str, mesh: trimesh.Trimesh, work: Path, timeout: float, threshold: float | None = None
) -> list[trimesh.Trimesh] | None:
    """obj2mjcf's collision hulls of ``mesh`` (CoACD defaults, or CoACD's concavity ``threshold``), in the mesh's
    frame; None if it failed."""
    exe = shutil.which("obj2mjcf") or str(Path(sys.executable).parent / "obj2mjcf")
    d = work / (f"peer_{scene}_{name}" + ("" if threshold is None else f"_t{threshold:g}"))
    d.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(mesh.vertices.tobytes() + mesh.faces.tobytes()).hexdigest()
    files = sorted((d / name).glob(f"{name}_collision_*.obj"))
    if not ((d / "mesh.sha256").is_file() and (d / "mesh.sha256").read_text() == key and files):
        args = [] if threshold is None else ["--coacd-args.threshold", f"{threshold:g}"]
        files = _run_peer(exe, d, name, mesh, timeout, args)
        (d / "mesh.sha256").write_text(key)
    hulls = [trimesh.load(f, process=False, force="mesh").convex_hull for f in files]
    return [h for h in hulls if len(h.vertices) >= 4] or None


def _run_peer(
    exe: str, d: Path, name: str, mesh: trimesh.Trimesh, timeout: float, args: list[str]
) -> list[Path]:
    mesh.export(d / f"{name}.obj")
    try:
        subprocess.run(
            [exe, "--obj-dir", str(d), "--decompose", "--save-mjcf", "--overwrite", *args],
            capture_output=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return []
    return sorted((d / name).glob(f"{name}_collision_*.obj"))


def fidelity(scene, meshes_of) -> list[float]:
    """Per object collision-to-surface Hausdorff [mm] of ``meshes_of(name)`` against the object's repaired mesh
    (nan where the two do not overlap to measure)."""
    from real2sim.export.collision.fidelity import hull_fidelity
    from real2sim.export.objects.repair import repair_mesh

    out = []
    for o in scene.objects:
        try:
            out.append(
                hull_fidelity(repair_mesh(o.mesh, o.name).mesh, meshes_of(o), samples=2000).hausdorff * 1e3
            )
        except ValueError:
            out.append(float("nan"))
    return out
