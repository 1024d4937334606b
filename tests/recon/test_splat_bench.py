"""The splat benchmark runs real2sim and the plain Open3D meshers on one splat (a synthetic porous sphere shell,
to stay fast) and writes one scored row each."""

from __future__ import annotations

import json

import numpy as np
import pytest

from real2sim.recon.io.splat import GaussianSplat, write_splat
from tests.helpers.bench import run_bench


@pytest.mark.slow  # one object-only reconstruction and two Open3D meshers (~25 s)
def test_bench_splat_rows(tmp_path):
    rng = np.random.default_rng(0)
    v = rng.normal(size=(4000, 3))
    v = v / np.linalg.norm(v, axis=1, keepdims=True)
    v = v[v[:, 2] > -0.9]  # an unobserved bottom cap
    n = len(v)
    s = GaussianSplat(
        v, np.full((n, 3), 0.02), np.tile([1.0, 0, 0, 0], (n, 1)), np.full(n, 0.9), np.full((n, 3), 0.5)
    )
    write_splat(tmp_path / "ball.ply", s)
    run_bench("bench_splat.py", "--splat", str(tmp_path / "ball.ply"), "--json", str(tmp_path / "b.json"))
    rows = json.loads((tmp_path / "b.json").read_text())
    assert [r["method"].split()[0] for r in rows] == ["real2sim", "plain", "plain"]
    ours = rows[0]
    assert ours["watertight"] and ours["genus"] == 0 and ours["coverage"] >= 0.95, ours
    assert ours["hull_ratio"] >= 0.9, ours  # a filled ball, not a shell
    assert all(r["seconds"] > 0 and r["opaque_gaussians"] == n for r in rows)
