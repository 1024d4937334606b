"""The export benchmark runs in quick mode (CI smoke): both tools when obj2mjcf is installed, ours meets budget."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tests.helpers.bench import run_bench


def test_bench_export_quick(tmp_path):
    out = tmp_path / "bench.json"
    r = run_bench("bench_export.py", "--json", str(out), timeout=120)
    res = json.loads(out.read_text())
    ours = [row for row in res["rows"] if row["tool"] == "real2sim"]
    assert ours and all(row["rests"] and row["compiles"] for row in ours)
    assert all(row["hulls"] <= 32 and row["max_hull_vertices"] <= 64 and row["in_budget"] for row in ours)
    assert all(row["iou"] > 0.9 and row["hausdorff_rel"] < 0.1 for row in ours)
    assert all(row["cpu_seconds"] > 0 and row["stages"]["collision"] > 0 for row in ours)
    assert res["summary"]["median_seconds_real2sim"] > 0
    peer_installed = shutil.which("obj2mjcf") or (Path(sys.executable).parent / "obj2mjcf").exists()
    peer = [row for row in res["rows"] if row["tool"] == "obj2mjcf"]
    if peer_installed:
        p = peer[0]
        assert p["compiles"] and p["hulls"] >= 1
        assert p["in_budget"] == (p["hulls"] <= 32 and p["max_hull_vertices"] <= 64)
        assert res["summary"]["over_budget"]["real2sim"] == []
        assert (
            "rest" in p and p["rest"]["drift_mm"] >= 0 and p["mass_ratio"] > 0
        )  # its rest test and mass ran
        assert res["summary"]["speedup_median"] > 0 and "l_block" in res["summary"]["fidelity_vs_peer"]
    else:
        assert not peer and "obj2mjcf not installed" in r.stderr


def test_bench_export_does_not_time_a_failed_peer(tmp_path):
    """An obj2mjcf that exits with an error (a broken install) is reported as failed, not timed as a fast run."""
    import os
    import subprocess

    from tests.helpers.bench import ROOT

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "obj2mjcf"
    stub.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named obj2mjcf' >&2\nexit 1\n")
    stub.chmod(0o755)
    out = tmp_path / "bench.json"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    r = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_export.py"), "--quick", "--json", str(out)],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=env,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads(out.read_text())["summary"]
    assert "No module named obj2mjcf" in summary["peer_failed"]["l_block"]
    assert "speedup_median" not in summary and "fidelity_vs_peer" not in summary
    assert "obj2mjcf failed on l_block" in r.stderr
