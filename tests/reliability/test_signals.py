"""Interrupted runs clean up after themselves; workers never outlive their run; worker errors stay one line.

SIGTERM and SIGINT during ``export`` (while its pool workers decompose meshes) end it with one line and exit 143 /
130, no worker left, no partial folder; after ``kill -9`` the workers die with their parent and the next run into
the same ``-o`` removes the partial folder and exits 0.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
import trimesh

from real2sim.errors import InputError, StageError
from real2sim.executor import ExecutorCfg, run_map
from real2sim.scene import Scene, SceneObject, Support, save_scene

ROOT = Path(__file__).resolve().parents[2]


def _bad_input(x: int) -> int:
    if x == 2:
        raise InputError(f"scan_{x}.ply", "no points")
    return x


def _die(x: int) -> int:
    if x == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def test_an_input_error_in_a_worker_reaches_the_caller_as_itself():
    with pytest.raises(InputError) as e:
        run_map(_bad_input, [1, 2, 3], ExecutorCfg(workers=2))
    assert str(e.value) == "scan_2.ply: no points" and e.value.path == "scan_2.ply"


def test_an_input_error_in_a_worker_is_one_error_line_in_the_cli(tmp_path):
    code = textwrap.dedent("""
        from real2sim.cli import cli
        from real2sim.executor import ExecutorCfg, run_map
        from tests.reliability.test_signals import _bad_input

        @cli.command("boom")
        def boom():
            run_map(_bad_input, [1, 2, 3], ExecutorCfg(workers=2))

        cli.main(["boom"], prog_name="real2sim")
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and r.stderr.strip() == "error: scan_2.ply: no points", r.stderr


def test_a_worker_that_dies_is_a_stage_error_and_no_worker_is_left():
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with pytest.raises(StageError, match="worker process died"):
        run_map(_die, [0, 1, 2, 3], ExecutorCfg(workers=2), label="dying")
    time.sleep(0.5)
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and p.is_running()]
    assert all(p.status() == psutil.STATUS_ZOMBIE for p in left), left


def _scene(folder: Path) -> Path:
    """Objects whose decomposition keeps two workers busy for a while."""
    objs = tuple(
        SceneObject(f"knot{k}", trimesh.creation.torus(0.05, 0.015, major_sections=64, minor_sections=32),
                    _at(0.2 * k, 0.0, 0.015))
        for k in range(4)
    )  # fmt: skip
    return save_scene(Scene(Support(size=(1.2, 0.6)), objs), folder)


def _at(x: float, y: float, z: float):
    import numpy as np

    t = np.eye(4)
    t[:3, 3] = [x, y, z]
    return t


def _start_export(scene: Path, out: Path) -> tuple[subprocess.Popen, list[psutil.Process]]:
    """``real2sim export`` in its own process group, returned once its pool workers are running."""
    env = dict(os.environ, REAL2SIM_CACHE=str(out.parent / "cache"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "real2sim", "-q", "export", str(scene), "-o", str(out), "--workers", "2", "--no-cache"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        kids = [p for p in psutil.Process(proc.pid).children() if "spawn_main" in " ".join(p.cmdline())]
        if len(kids) >= 2 and all(p.cpu_times().user > 0.5 for p in kids):  # past their imports, working
            return proc, kids
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    proc.kill()
    raise AssertionError("the export's workers did not start")


def _gone(procs: list[psutil.Process], timeout: float = 20.0) -> bool:
    _, alive = psutil.wait_procs(procs, timeout=timeout)
    return all(p.status() == psutil.STATUS_ZOMBIE for p in alive)


@pytest.mark.parametrize(("sig", "code", "line"), [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")])  # fmt: skip
def test_a_signal_stops_the_run_with_one_line_and_no_leftovers(tmp_path, sig, code, line):
    scene = _scene(tmp_path / "scene")
    out = tmp_path / "pkg"
    proc, kids = _start_export(scene, out)
    if sig == signal.SIGINT:  # Ctrl-C in a terminal reaches the whole process group
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code and err.strip() == line, (proc.returncode, err)
    assert _gone(kids), kids
    assert not out.exists() and not [p for p in tmp_path.iterdir() if ".partial-" in p.name]


def test_after_kill_9_workers_die_and_the_next_run_removes_the_partial(tmp_path):
    scene = _scene(tmp_path / "scene")
    out = tmp_path / "pkg"
    proc, kids = _start_export(scene, out)
    stale = tmp_path / ".pkg.partial-0badf00d"  # what a parent killed while writing its folder leaves
    stale.mkdir()
    (stale / "scene.xml").write_text("<mujoco")
    proc.kill()
    proc.communicate(timeout=60)
    assert _gone(kids), kids
    r = subprocess.run(
        [sys.executable, "-m", "real2sim", "-q", "export", str(scene), "-o", str(out), "--workers", "2"],
        cwd=ROOT, capture_output=True, text=True, timeout=1200, env=dict(os.environ, REAL2SIM_CACHE=str(tmp_path / "cache")),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert not [p for p in tmp_path.iterdir() if ".partial-" in p.name] and (out / "scene.xml").is_file()
