"""pyright finds no errors in the project's code (basic mode, [tool.pyright] in pyproject.toml; CI runs this with
the tests, as it runs ruff)."""

import importlib.util
import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _fmt(d: dict) -> str:
    where = d.get("range", {}).get("start", {})
    path = d.get("file", "?").replace(str(ROOT) + "/", "")
    rule = d.get("rule", "")
    return f"{path}:{where.get('line', -1) + 1}:{where.get('character', -1) + 1}: {d['message']} [{rule}]"


def test_pyright():
    if importlib.util.find_spec("pyright") is None:
        pytest.fail("pyright is not installed: bash scripts/setup.sh --dev installs it")
    # --pythonpath: resolve third-party imports in the environment that runs the tests (the config's .venv otherwise)
    cmd = [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable, "-p", str(ROOT)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    try:
        report = json.loads(out.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright did not run (exit {out.returncode}): {out.stdout[-2000:]}{out.stderr[-2000:]}")
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    # the config's include reached the project (151 files when this test was written), not an empty folder
    assert report["summary"]["filesAnalyzed"] >= 100, report["summary"]
    shown = "\n".join(_fmt(d) for d in errors[:30])
    assert not errors, f"pyright: {len(errors)} errors, the first {min(len(errors), 30)}:\n{shown}"
