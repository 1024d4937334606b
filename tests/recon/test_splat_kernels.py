"""A splat meshed as one solid object and set down at rest gives the same scene files under two OpenBLAS kernels:
the stable pose is rounded and the mesh moved without BLAS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.blas import cpu_kernels, two_kernels

ROOT = Path(__file__).resolve().parents[2]
CODE = """
import json, sys
from pathlib import Path
import numpy as np
from real2sim.recon.io.splat import GaussianSplat
from real2sim.recon.splats.config import SplatReconCfg
from real2sim.recon.splats.run import _solid_object
from real2sim.scene import save_scene
from tests.helpers.blas import folder_digest

rng = np.random.default_rng(3)
v = rng.normal(size=(4000, 3))
v /= np.linalg.norm(v, axis=1, keepdims=True)
v *= [0.06, 0.04, 0.025]  # an egg-shaped shell, tilted: its rest pose is a real rotation
c, s = np.cos(0.4), np.sin(0.4)
v = v @ np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]]).T
n = len(v)
q = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
splat = GaussianSplat(v, np.full((n, 3), 0.004), q, np.full(n, 0.9), rng.uniform(0.2, 0.8, (n, 3)), "egg.ply")
out = _solid_object(splat, SplatReconCfg(object_cells=48, max_triangles=4000))
save_scene(out.scene, Path(sys.argv[1]))
print(json.dumps({"digest": folder_digest(Path(sys.argv[1])), "objects": len(out.scene.objects)}))
"""


def test_solid_splat_scene_files_are_the_same_under_two_blas_kernels(tmp_path: Path) -> None:
    kernels = two_kernels()
    if len(kernels) < 2:
        pytest.skip(f"this CPU runs fewer than two OpenBLAS kernels ({cpu_kernels()})")
    res = {}
    for k in kernels:
        env = {**os.environ, "OPENBLAS_CORETYPE": k}
        r = subprocess.run([sys.executable, "-c", CODE, str(tmp_path / k)], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=600)  # fmt: skip
        assert r.returncode == 0, r.stderr[-2000:]
        res[k] = json.loads(r.stdout.strip().splitlines()[-1])
    assert all(r["objects"] == 1 for r in res.values()), res
    assert len({r["digest"] for r in res.values()}) == 1, res
