"""``real2sim`` command line. Thin: each command builds a config and calls the stage's ``run_*``."""

from __future__ import annotations

import sys
import traceback

import click

from real2sim import __version__
from real2sim.errors import NotBuiltError, Real2SimError, Terminated
from real2sim.progress import configure, console


class _Main(click.Group):
    """Maps ``Real2SimError`` to one line and exit 1 (``NotBuiltError``: exit 2); tracebacks only with --debug."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except Real2SimError as exc:
            if ctx.params.get("debug"):
                raise
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2 if isinstance(exc, NotBuiltError) else 1)
        except KeyboardInterrupt as exc:
            from real2sim.stopping import report

            report("terminated" if isinstance(exc, Terminated) else "interrupted")
            ctx.exit(143 if isinstance(exc, Terminated) else 130)
        except Exception as exc:
            if ctx.params.get("debug"):
                raise
            last = traceback.extract_tb(exc.__traceback__)[-1]
            where = f"{last.filename.rsplit('/', 1)[-1]}:{last.lineno}"
            click.echo(
                f"internal error: {exc.__class__.__name__}: {exc} (at {where}; rerun with --debug for the traceback)",
                err=True,
            )
            ctx.exit(1)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="real2sim")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.option("-q", "--quiet", is_flag=True, help="Only errors; no progress bars.")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
@click.pass_context
def cli(ctx: click.Context, verbose: int, quiet: bool, debug: bool) -> None:
    """Turn captures of the real world into simulation-ready worlds and calibrated simulators."""
    configure(verbose, quiet)
    ctx.ensure_object(dict)
    ctx.obj.update(verbose=verbose, quiet=quiet, debug=debug)


def _register() -> None:
    from real2sim.cli import calibrate, demo, export, process, recon, validate

    for mod in (demo, recon, export, validate, calibrate, process):
        cli.add_command(mod.command)


_register()


def main() -> None:
    from real2sim.stopping import install_stop_handlers

    install_stop_handlers()
    try:
        cli.main(prog_name="real2sim")
    except SystemExit as exc:
        sys.exit(exc.code)


def echo_summary(text: str) -> None:
    """Print a result summary to stdout (tables and lines meant for the user, not logs)."""
    from rich.console import Console

    Console().print(text) if console.is_terminal else click.echo(text)
