"""The simulation-cost benchmark runs in quick mode (CI smoke): the ground-truth sample tabletop, ours only."""

from __future__ import annotations

import json

from tests.helpers.bench import run_bench


def test_bench_simcost_quick(tmp_path):
    out = tmp_path / "simcost.json"
    r = run_bench("bench_simcost.py", "--json", str(out), timeout=300)
    rows = json.loads(out.read_text())["rows"]
    assert {row["scene"] for row in rows} == {"sample_ground_truth"}
    assert [row["tool"] for row in rows] == ["real2sim", "r2s-shull"]
    row = rows[0]
    assert row["tool"] == "real2sim" and row["step_us"] > 0 and row["contacts"] > 0
    assert row["pieces"][:2] == ["box", "cylinder"] and len(row["hausdorff_mm"]) == 4
    assert "sample_ground_truth" in r.stdout
    assert row["contacts"] < 0.5 * rows[1]["contacts"]  # support hulls: fewer contacts
