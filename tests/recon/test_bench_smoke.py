"""The recon benchmark's --quick mode runs end to end and writes its JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_recon_quick(tmp_path: Path) -> None:
    out = tmp_path / "recon.json"
    r = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_recon.py"), "--quick", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    d = json.loads(out.read_text())
    case = d["cases"][0]
    assert case["points"] == 30_000
    assert case["real2sim"]["objects"] == 4 and case["real2sim"]["watertight"] is True
    assert case["open3d_baseline"]["total"] > 0
