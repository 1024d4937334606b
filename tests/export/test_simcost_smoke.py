"""The simulation-cost benchmark runs in quick mode (CI smoke): the ground-truth sample tabletop, ours only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_simcost_quick(tmp_path):
    out = tmp_path / "simcost.json"
    r = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_simcost.py"), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rows = json.loads(out.read_text())["rows"]
    assert {row["scene"] for row in rows} == {"sample_ground_truth"}
    assert [row["tool"] for row in rows] == ["real2sim", "r2s+shull"]
    row = rows[0]
    assert row["tool"] == "real2sim" and row["step_us"] > 0 and row["contacts"] > 0
    assert row["pieces"][:2] == ["box", "cylinder"] and len(row["hausdorff_mm"]) == 4
    assert "sample_ground_truth" in r.stdout
