"""The calibration benchmark's --quick mode runs both fitters end to end and writes its JSON."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.bench import run_bench


def test_bench_quick(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    run_bench("bench_calibration.py", "--json", str(out), timeout=120)
    res = json.loads(out.read_text())
    m = res["methods"]
    assert set(m) == {"real2sim", "mujoco.sysid", "initial"}
    # both fitters improve on the start; real2sim reaches at most 1.05x sysid's cost
    assert m["real2sim"]["final_cost"] < m["initial"]["final_cost"]
    assert m["mujoco.sysid"]["final_cost"] < m["initial"]["final_cost"]
    assert res["cost_ratio"] <= 1.05
