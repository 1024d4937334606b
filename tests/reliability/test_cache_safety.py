"""The decomposition cache shared by concurrent runs, and entries torn or corrupted on disk."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import trimesh

from real2sim.export.collision.cache import STALE_SECONDS, load, save
from real2sim.export.collision.geometry import collision_geometry
from real2sim.export.config import ExportCfg
from real2sim.scene import Scene, SceneObject, Support, save_scene

ROOT = Path(__file__).resolve().parents[2]


def _box_cfg(cache_dir: Path) -> ExportCfg:
    return replace(ExportCfg(workers=1), cache_dir=cache_dir)


def _same(a, b) -> bool:
    if (a.primitive is None) != (b.primitive is None) or len(a.hulls) != len(b.hulls):
        return False
    if a.primitive is not None and not all(
        np.array_equal(getattr(a.primitive, k), getattr(b.primitive, k)) for k in ("pos", "quat", "size")
    ):
        return False
    return all(
        np.array_equal(va, vb) and np.array_equal(fa, fb)
        for (va, fa), (vb, fb) in zip(a.hulls, b.hulls, strict=True)
    )


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "no_checksum"])
def test_a_damaged_entry_is_detected_and_recomputed_with_a_warning(damage, tmp_path, caplog):
    mesh, cfg = trimesh.creation.cylinder(0.03, 0.1, sections=24), _box_cfg(tmp_path)
    first = collision_geometry(mesh, cfg)
    (entry,) = tmp_path.glob("*.npz")
    raw = entry.read_bytes()
    if damage == "truncate":  # a run killed while writing (before atomic writes) or a full disk
        entry.write_bytes(raw[: len(raw) // 2])
    elif damage == "flip":
        i = raw.index(b"\x93NUMPY") + 200
        entry.write_bytes(raw[:i] + bytes([raw[i] ^ 0x10]) + raw[i + 1 :])
    elif damage == "empty":
        entry.write_bytes(b"")
    else:  # an entry written without its checksum (an older layout, or a foreign file)
        with np.load(entry) as z:
            np.savez(entry, **{k: z[k] for k in z.files if k != "sha256"})
    with caplog.at_level(logging.WARNING):
        again = collision_geometry(mesh, cfg)
    assert not again.cached and _same(first, again)
    assert "damaged" in caplog.text and entry.name in caplog.text
    assert load(entry) is not None and entry.read_bytes() == raw  # rewritten whole, byte-identical
    assert collision_geometry(mesh, cfg).cached


def test_no_temporary_files_are_left_in_the_cache(tmp_path):
    collision_geometry(trimesh.creation.box((0.1, 0.2, 0.3)), _box_cfg(tmp_path))
    assert [p.suffix for p in tmp_path.iterdir()] == [".npz"]


def _scene(folder: Path) -> Path:
    a = trimesh.creation.box((0.12, 0.04, 0.04))
    b = trimesh.creation.box((0.04, 0.04, 0.10))
    b.apply_translation([0.04, 0.0, 0.07])
    ell = trimesh.boolean.union([a, b], engine="manifold")
    at = np.eye(4)
    at[:3, 3] = [0.2, 0.0, 0.02]
    objs = (SceneObject("box", trimesh.creation.box((0.1, 0.16, 0.05)), density=700.0),
            SceneObject("ell", ell, at, density=900.0))  # fmt: skip
    return save_scene(Scene(Support(size=(1.0, 1.0)), objs), folder)


def _files(pkg: Path) -> dict[str, bytes]:
    return {p.relative_to(pkg).as_posix(): p.read_bytes() for p in sorted(pkg.rglob("*")) if p.is_file()}


def test_two_concurrent_exports_sharing_one_cache_give_identical_packages(tmp_path):
    scene = _scene(tmp_path / "scene")
    cache = tmp_path / "cache"
    env = dict(os.environ, REAL2SIM_CACHE=str(cache), OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))

    def export(out: Path) -> subprocess.Popen:
        cmd = [sys.executable, "-m", "real2sim", "-q", "export", str(scene), "-o", str(out), "--workers", "1",
               "--name", "pkg"]  # fmt: skip
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    runs = [export(tmp_path / "a" / "pkg"), export(tmp_path / "b" / "pkg")]  # both start on a cold cache
    for r in runs:
        out, err = r.communicate(timeout=300)
        assert r.returncode == 0, err.decode()
    a, b = _files(tmp_path / "a" / "pkg"), _files(tmp_path / "b" / "pkg")
    assert a == b and any(k.endswith(".xml") for k in a)
    entries = sorted(cache.rglob("*.npz"))
    assert len(entries) >= 2 and all(load(e) is not None for e in entries)
    assert not [p for p in cache.rglob("*") if p.is_file() and p.suffix != ".npz"]  # no temporary files left
    warm = export(tmp_path / "c" / "pkg")
    assert warm.wait(timeout=300) == 0 and _files(tmp_path / "c" / "pkg") == a


def test_temporary_files_of_killed_runs_are_swept_and_a_write_in_progress_is_kept(tmp_path: Path) -> None:
    from real2sim.export.collision.shape import Collision

    box = trimesh.creation.box((0.1, 0.1, 0.1))
    stale, fresh = tmp_path / ".a.npz.x1.tmp", tmp_path / ".b.npz.x2.tmp"
    for f in (stale, fresh):
        f.write_bytes(b"half an entry")
    old = os.path.getmtime(fresh) - STALE_SECONDS - 60
    os.utime(stale, (old, old))
    save(tmp_path / "c.npz", Collision(None, ((np.asarray(box.vertices), np.asarray(box.faces)),)))
    assert not stale.exists() and fresh.exists()
    assert load(tmp_path / "c.npz") is not None
