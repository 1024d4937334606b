"""The tree is ruff-clean and ruff-formatted (CI runs this with the tests)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def _ruff() -> list[str]:
    exe = Path(sys.executable).with_name("ruff")
    if exe.is_file():
        return [str(exe)]
    if shutil.which("ruff"):
        return ["ruff"]
    pytest.fail("ruff is not installed: bash scripts/setup.sh --dev installs it")


@pytest.mark.parametrize("args", [["check", "--no-cache", "."], ["format", "--check", "--no-cache", "."]])
def test_ruff(args):
    out = subprocess.run([*_ruff(), *args], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
