"""The CLI answers in a blink: help, version, usage and missing-file errors load no numerical library, and shell
completion (click's) works without them too.

Each case runs ``python -m real2sim ...`` in a fresh interpreter with ``-X importtime``, which lists every module
the process imported; none of the heavy packages may be among them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT

HEAVY = ("numpy", "scipy", "trimesh", "open3d", "mujoco", "matplotlib", "pycolmap", "cv2", "coacd", "rich")

FAST_CASES = [
    (["--help"], 0, "Usage: real2sim"),
    (["--version"], 0, "real2sim, version"),
    (["demo", "--help"], 0, "--out"),
    (["recon", "--help"], 0, "pointcloud"),
    (["recon", "pointcloud", "--help"], 0, "--voxel"),
    (["recon", "photos", "--help"], 0, "--marker-size"),
    (["recon", "splat", "--help"], 0, "--scale"),
    (["export", "--help"], 0, "--max-hulls"),
    (["validate", "--help"], 0, "--json"),
    (["calibrate", "--help"], 0, "--fit"),
    (["process", "--help"], 0, "--ray"),
    (["twin", "--help"], 0, "--base-pose"),
    (["replay", "--help"], 0, "--variations"),
    (["no-such-command"], 2, "No such command"),
    (["export"], 2, "Missing argument 'SCENE_DIR'"),
    (["export", "no_such_scene", "-o", "pkg"], 1, "error: no_such_scene: no such scene folder"),
    (["validate", "no_such_pkg"], 1, "error: no_such_pkg: no such package folder"),
    (["recon", "pointcloud", "no_such.ply", "-o", "s"], 1, "error: no_such.ply: no such file"),
    (["recon", "photos", "no_such_dir", "-o", "s"], 1, "error: no_such_dir: no such image folder"),
    (["recon", "splat", "no_such.ply", "-o", "s"], 1, "error: no_such.ply: no such splat file"),
    (["process", "no_such_session", "-o", "out"], 1, "no_such_session: no such session folder"),
    (
        ["twin", "--robot", "no_such.xml", "--scene", "p", "-o", "t"],
        1,
        "error: no_such.xml: no such robot model",
    ),
    (["replay", "no_such_twin", "--episodes", "d", "-o", "o"], 1, "error: no_such_twin: no such twin folder"),
    (
        ["calibrate", "no_such.xml", "--log", "a.csv", "--map", "m.toml", "--fit", "x", "-o", "out"],
        1,
        "error: no_such.xml: does not exist",
    ),
]


def _run(args: list[str], cwd: os.PathLike, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "real2sim", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=120,
    )


def _imported(stderr: str) -> set[str]:
    """Top-level packages named in ``-X importtime``'s lines (``import time: self | cumulative | name``)."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":  # the header line
                names.add(name.split(".")[0])
    return names


@pytest.mark.parametrize(("args", "code", "expected"), FAST_CASES, ids=[" ".join(c[0]) for c in FAST_CASES])
def test_help_usage_and_missing_files_load_no_heavy_library(tmp_path, args, code, expected):
    out = _run(args, tmp_path)
    lines = [ln for ln in out.stderr.splitlines() if not ln.startswith("import time:")]
    assert out.returncode == code, (out.stdout, lines)
    assert expected in out.stdout + "\n".join(lines)
    imported = _imported(out.stderr)
    assert "real2sim" in imported and "click" in imported  # the parse saw the imports
    assert not imported & set(HEAVY), f"real2sim {' '.join(args)} imported {sorted(imported & set(HEAVY))}"
    assert list(tmp_path.iterdir()) == []  # an error writes nothing


def test_shell_completion_works_without_heavy_libraries(tmp_path):
    script = _run([], tmp_path, {"_REAL2SIM_COMPLETE": "bash_source"})
    assert script.returncode == 0 and "complete -o nosort -F _real2sim_completion real2sim" in script.stdout
    env = {"_REAL2SIM_COMPLETE": "bash_complete", "COMP_WORDS": "real2sim ex", "COMP_CWORD": "1"}
    words = _run([], tmp_path, env)
    assert words.returncode == 0 and words.stdout.split() == ["plain,export"]
    env = {
        "_REAL2SIM_COMPLETE": "bash_complete",
        "COMP_WORDS": "real2sim recon pointcloud --vo",
        "COMP_CWORD": "3",
    }
    words = _run([], tmp_path, env)
    assert words.returncode == 0 and words.stdout.split() == ["plain,--voxel"]
    assert not _imported(words.stderr) & set(HEAVY)


def test_help_is_fast(tmp_path):
    """A generous wall-time bound (the import check above is the precise guard), relative to an interpreter that
    only imports click so that a loaded machine slows both alike: the best of five ``--help`` runs within 4x that
    plus 0.3 s (figures in docs/speed.md)."""

    def best(cmd: list[str]) -> float:
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            subprocess.run(cmd, cwd=tmp_path, capture_output=True, check=True, env=env)
            times.append(time.perf_counter() - t0)
        return min(times)

    base = best([sys.executable, "-c", "import click"])
    cli = best([sys.executable, "-m", "real2sim", "--help"])
    assert cli < 4 * base + 0.3, f"real2sim --help {cli:.2f} s vs import click {base:.2f} s"
