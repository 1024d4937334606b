"""Run a benchmark script in its quick (CI smoke) mode and hand back its output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_bench(script: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python benchmarks/<script> --quick ARGS`` from the repo root; fails the test on a non-zero exit."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--quick", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc
