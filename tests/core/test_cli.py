import click
import pytest
from click.testing import CliRunner

from real2sim import __version__
from real2sim.cli import cli
from real2sim.errors import InputError, NotBuiltError


@pytest.fixture()
def runner():
    return CliRunner()


@pytest.fixture()
def failing_commands():
    @click.command("x-input")
    @click.option("-o", "--output")
    def x_input(output):
        raise InputError("/data/scan.ply", "truncated: header says 100 points, file holds 7")

    @click.command("x-notbuilt")
    def x_notbuilt():
        raise NotBuiltError("'real2sim x' is not built yet")

    @click.command("x-bug")
    def x_bug():
        raise RuntimeError("boom")

    for c in (x_input, x_notbuilt, x_bug):
        cli.add_command(c)
    yield
    for name in ("x-input", "x-notbuilt", "x-bug"):
        cli.commands.pop(name)


def test_help_lists_every_stage(runner):
    r = runner.invoke(cli, ["--help"])
    assert r.exit_code == 0
    for sub in ("demo", "recon", "export", "calibrate", "validate", "process"):
        assert sub in r.output
    r = runner.invoke(cli, ["recon", "--help"])
    assert r.exit_code == 0 and all(s in r.output for s in ("pointcloud", "photos", "splat"))


def test_version(runner):
    r = runner.invoke(cli, ["--version"])
    assert r.exit_code == 0 and __version__ in r.output


def test_real2sim_error_is_one_line_exit_1(runner, failing_commands):
    r = runner.invoke(cli, ["x-input"])
    assert r.exit_code == 1
    lines = r.output.strip().splitlines()
    assert lines == ["error: /data/scan.ply: truncated: header says 100 points, file holds 7"]
    assert "Traceback" not in r.output


def test_not_built_exits_2(runner, failing_commands):
    r = runner.invoke(cli, ["x-notbuilt"])
    assert r.exit_code == 2 and "not built yet" in r.output


def test_unexpected_exception_one_line_unless_debug(runner, failing_commands):
    r = runner.invoke(cli, ["x-bug"])
    assert r.exit_code == 1 and len(r.output.strip().splitlines()) == 1 and "RuntimeError: boom" in r.output
    r = runner.invoke(cli, ["--debug", "x-bug"])
    assert isinstance(r.exception, RuntimeError)  # --debug lets the traceback through


def test_usage_error_exits_2(runner):
    r = runner.invoke(cli, ["no-such-command"])
    assert r.exit_code == 2
