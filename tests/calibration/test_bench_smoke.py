"""The calibration benchmark's --quick mode runs both fitters end to end and writes its JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_quick(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_calibration.py"), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(out.read_text())
    m = res["methods"]
    assert set(m) == {"real2sim", "mujoco.sysid", "initial"}
    # both fitters improve on the start; real2sim reaches at most 1.05x sysid's cost
    assert m["real2sim"]["final_cost"] < m["initial"]["final_cost"]
    assert m["mujoco.sysid"]["final_cost"] < m["initial"]["final_cost"]
    assert res["cost_ratio"] <= 1.05
