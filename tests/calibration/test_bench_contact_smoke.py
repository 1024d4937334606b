"""The contact benchmark's --quick mode fits the cube three ways (ours, a grid, mujoco.sysid), fits it for
PyBullet, and writes its JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.bench import ROOT, run_bench


def test_bench_contact_quick(tmp_path: Path) -> None:
    if not (ROOT.parent / "shared" / "data" / "object_logs" / "contactnets_cube").is_dir():
        pytest.skip("the shared cube tosses are not present")
    out = tmp_path / "bench.json"
    run_bench("bench_contact.py", "--json", str(out), timeout=600)
    res = json.loads(out.read_text())
    m = res["methods"]
    assert {"MuJoCo defaults", "real2sim", "grid (ranked by whole toss)"} <= set(m)
    assert "mujoco.sysid" in m or "error" in res["sysid"]
    assert m["real2sim"]["window"] < 0.5 * m["MuJoCo defaults"]["window"]
    assert m["real2sim"]["whole"] < m["MuJoCo defaults"]["whole"]
    assert set(res["ratios_vs_grid"]) == {"window", "whole", "rest"}
    pbd, pbf = m["PyBullet defaults"], m["PyBullet, fitted for PyBullet"]
    assert pbf["whole"] < pbd["whole"]  # PyBullet's own values fitted on the tosses beat its defaults
    assert set(res["pybullet_fitted_vs_defaults"]) == {"window", "whole", "rest"}
    assert 1e-3 <= pbf["values"]["lateral"] <= 3.0 and 0 < pbf["values"]["restitution"] < 1
