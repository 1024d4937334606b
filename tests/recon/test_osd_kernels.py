"""The OSD segmentation gives the same objects on every CPU: each scene is reconstructed in a fresh process under
several OpenBLAS kernels (``OPENBLAS_CORETYPE``, those this CPU can run), with 0.1 mm of jitter on its points,
and with its points in a shuffled order.

The scene frame is fitted with BLAS/LAPACK, whose last bits depend on the kernel; it is rounded, and the points are
moved without BLAS (``transforms.apply_transform``), so every kernel segments the same scene-frame coordinates; the
objects' frames are rounded and their meshes' footprints and vertices computed without BLAS too, so every kernel
writes the same scene files.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.blas import cpu_kernels, two_kernels

ROOT = Path(__file__).resolve().parents[2]
EXPECT = {"test21": 3, "test44": 5, "test56": 14}
"""Objects in each scene (the OSD annotation)."""
CODE = """
import json, sys, dataclasses, shutil, tempfile
import numpy as np
from pathlib import Path
import real2sim.recon.pointcloud.run as pc
from real2sim.recon.io import read_points
from tests.helpers.blas import folder_digest
from tests.helpers.osd import object_ious, truth_labels

scene, jitter, shuffle, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[4]), int(sys.argv[5])
read = pc.read_scan
order = {}
def changed(path, units, voxel):
    c = read(path, units, voxel)
    if jitter:
        c = dataclasses.replace(c, points=c.points + np.random.default_rng(seed).normal(0.0, jitter, c.points.shape))
    if shuffle:  # every per-point field in one random order; the cloud is no longer organised
        perm = np.random.default_rng(shuffle).permutation(len(c.points))
        order["perm"] = perm
        per_point = ("points", "colors", "normals", "labels", "intensity", "sensor_origin")
        fields = {f: getattr(c, f) for f in per_point}
        fields = {f: v[perm] if v is not None and np.ndim(v) and len(v) == len(perm) else v for f, v in fields.items()}
        c = dataclasses.replace(c, **fields, width=len(perm), height=1)
    return c
pc.read_scan = changed
f = Path(sys.argv[3]) / "pointclouds" / "osd_tabletop" / f"{scene}.pcd"
tmp = Path(tempfile.mkdtemp())
out = pc.run_recon_pointcloud(pc.PointCloudReconCfg(inputs=(f,), out_dir=tmp / "scene"))
digest = folder_digest(tmp / "scene")
shutil.rmtree(tmp)
labels = out.point_labels
if shuffle:
    labels = np.empty_like(labels)
    labels[order["perm"]] = out.point_labels
cloud = read_points(f)
ious = object_ious(truth_labels(cloud), labels[cloud.valid_mask()])
print(json.dumps({"n": len(out.scene.objects), "ious": ious, "sha256": digest}))
"""


def _run(
    shared_data: Path, scene: str, kernel: str | None, jitter: float = 0.0, shuffle: int = 0, seed: int = 1
) -> dict:
    import os

    env = dict(os.environ)
    if kernel:
        env["OPENBLAS_CORETYPE"] = kernel
    r = subprocess.run(
        [sys.executable, "-c", CODE, scene, str(jitter), str(shared_data), str(shuffle), str(seed)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("scene", ["test44", "test56"])
def test_every_kernel_segments_the_same(shared_data: Path, scene: str) -> None:
    """Two kernels, one with fused multiply-adds and one without, give the same objects and the same scene files,
    byte for byte."""
    picked = two_kernels()
    if len(picked) < 2:
        pytest.skip(f"this CPU runs fewer than two OpenBLAS kernels ({cpu_kernels()})")
    results = {k: _run(shared_data, scene, k) for k in picked}
    for k, res in results.items():
        assert res["n"] == EXPECT[scene] and min(res["ious"]) >= 0.85, (k, res)
    assert len({res["sha256"] for res in results.values()}) == 1, results


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 8])
def test_box_on_a_box_survives_jitter(shared_data: Path, seed: int) -> None:
    """Test21's upper box rests on the lower one; under these jitter seeds LCCP joins them through patches that
    straddle the crease, and the weak link between them is cut (``segmentation/bridges.py``)."""
    res = _run(shared_data, "test21", None, jitter=1e-4, seed=seed)
    assert res["n"] == EXPECT["test21"] and min(res["ious"]) >= 0.85, res


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 13])
def test_touching_objects_survive_jitter(shared_data: Path, seed: int) -> None:
    """Under seed 13 a piece of object 2 touches object 5 only at a corner and the rest of object 2 along an edge,
    and its union with object 5 is the flatter one: a convex union is not taken over so weak a contact."""
    res = _run(shared_data, "test44", None, jitter=1e-4, seed=seed)
    assert res["n"] == EXPECT["test44"] and min(res["ious"]) >= 0.85, res


OPEN = pytest.mark.xfail(
    strict=True,
    reason="open: 14 objects, but the bowl's rim loses pieces to its neighbour (docs/reliability.md §7)",
)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, pytest.param(3, marks=OPEN)])
def test_cluttered_pile_survives_jitter(shared_data: Path, seed: int) -> None:
    res = _run(shared_data, "test56", None, jitter=1e-4, seed=seed)
    assert res["n"] == EXPECT["test56"] and min(res["ious"]) >= 0.85, res


@pytest.mark.slow
def test_cluttered_pile_does_not_depend_on_the_point_order(shared_data: Path) -> None:
    res = _run(shared_data, "test56", None, shuffle=1)
    assert res["n"] == EXPECT["test56"] and min(res["ious"]) >= 0.85, res
