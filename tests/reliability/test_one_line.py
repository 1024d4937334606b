"""The one-line rule's machinery: native output captured at the descriptor and shown with -v, log records held until
a command succeeds, MuJoCo's warnings kept out of the current folder, physics values refused with the value named."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from real2sim import physics
from tests.conftest import ROOT

NATIVE = """
import ctypes, logging, sys
import click
from real2sim.cli import cli

@cli.command("noisy")
@click.option("--fail", is_flag=True)
def noisy(fail):
    libc = ctypes.CDLL(None)
    libc.write(2, b"native chatter\\n", 15)
    logging.getLogger("x").warning("a warning")
    if fail:
        from real2sim.errors import InputError
        raise InputError("in.ply", "bad")
    click.echo("done")

cli.main(sys.argv[1:], prog_name="real2sim")
"""


def _run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-c", NATIVE, *args], capture_output=True, text=True, env=env, cwd=cwd
    )


def test_a_failure_is_one_line_and_minus_v_shows_the_rest() -> None:
    r = _run("noisy", "--fail")
    assert r.returncode == 1 and r.stderr == "error: in.ply: bad\n", r.stderr
    r = _run("-v", "noisy", "--fail")
    assert r.returncode == 1 and "native chatter" in r.stderr and "a warning" in r.stderr, r.stderr
    assert r.stderr.rstrip().endswith("error: in.ply: bad")


def test_a_success_shows_its_warnings_but_not_native_output() -> None:
    r = _run("noisy")
    assert r.returncode == 0 and r.stdout == "done\n", r
    assert "a warning" in r.stderr and "native chatter" not in r.stderr, r.stderr


def test_a_usage_error_is_one_line_naming_the_option() -> None:
    r = _run("validate", "pkg", "--samples", "many")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "'--samples'" in r.stderr, r.stderr
    assert r.stderr.startswith("error: ")


def test_mujoco_warnings_do_not_write_a_log_in_the_current_folder(tmp_path) -> None:
    code = (
        "from real2sim.stdio import route_mujoco_warnings\n"
        "import mujoco\n"
        "route_mujoco_warnings()\n"
        'm = mujoco.MjModel.from_xml_string(\'<mujoco><worldbody><body><freejoint/><geom size=".1"/>'
        "</body></worldbody></mujoco>')\n"
        "d = mujoco.MjData(m); d.qvel[3] = 1e200; mujoco.mj_step(m, d)\n"
        "assert d.warning[mujoco.mjtWarning.mjWARN_BADQVEL].number == 1\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert list(tmp_path.iterdir()) == [] and "WARNING" not in r.stdout + r.stderr


def test_every_simulating_command_routes_mujoco_warnings() -> None:
    import ast
    import inspect

    from real2sim.cli import calibrate, demo, export, process, validate

    for mod in (demo, export, validate, calibrate, process):
        body = ast.parse(inspect.getsource(mod.command.callback))
        calls = [
            n.func.id for n in ast.walk(body) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        ]
        assert "route_mujoco_warnings" in calls, mod.__name__


@pytest.mark.parametrize(
    ("value", "needle"),
    [((-0.8, 0.005, 0.0001), "-0.8"), ((0.8, -0.1, 0.0), "torsional"), ((1e9, 0.0, 0.0), "at most 10"),
     ((float("nan"), 0.0, 0.0), "finite"), ((True, 0.0, 0.0), "number"), ((0.5,), "sliding, torsional")],
)  # fmt: skip
def test_invalid_friction_is_refused_naming_the_value(value, needle) -> None:
    with pytest.raises(ValueError, match=None) as e:
        physics.friction(value, "geom 'g' friction")
    assert needle in str(e.value) and "geom 'g'" in str(e.value)


def test_poses_must_be_rigid_and_right_handed() -> None:
    good = np.eye(4)
    good[:3, 3] = [1, 2, 3]
    assert np.array_equal(physics.rigid(good.tolist(), "p"), good)
    for bad, needle in (
        (np.diag([-1.0, 1, 1, 1]), "mirrors"),
        (np.diag([2.0, 2, 2, 1]), "not a rigid"),
        (np.r_[np.eye(4)[:3], [[1, 1, 1, 5]]], "[0, 0, 0, 1]"),
        (np.zeros((4, 4)), "[0, 0, 0, 1]"),
    ):
        with pytest.raises(ValueError) as e:
            physics.rigid(bad, "p")
        assert needle in str(e.value)


@pytest.mark.parametrize("normal", [(0, 0, 0), (1, 0, 0), (0, 0, -1), (0, 0.5, 0.5)])
def test_support_normals_must_be_unit_and_up(normal) -> None:
    with pytest.raises(ValueError):
        physics.support_normal(normal)
    assert physics.support_normal((0.0, 0.0, 1.0)) == (0.0, 0.0, 1.0)
