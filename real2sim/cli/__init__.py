"""``real2sim`` command line. Thin: each command builds a config and calls the stage's ``run_*``."""

from __future__ import annotations

import errno
import re
import sys
import traceback
from typing import Any

import click

from real2sim import __version__
from real2sim.errors import ConfigError, NotBuiltError, OptionError, Real2SimError, Terminated
from real2sim.progress import configure


class _Main(click.Group):
    """Maps ``Real2SimError`` to one line and exit 1 (``NotBuiltError``, ``OptionError``: exit 2); tracebacks only
    with --debug.

    Without ``-v`` a failed command prints that one line and nothing else: log warnings are held back until the
    command succeeds (``progress.deferred_logs``) and what native libraries write to the descriptors is captured
    (``stdio.native_output_captured``)."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        from real2sim.progress import deferred_logs
        from real2sim.stdio import native_output_captured

        if ctx.parent is not None:  # a sub-group (``recon``): the top level holds and captures
            return self._invoke(ctx)
        verbose = bool(ctx.params.get("verbose")) or bool(ctx.params.get("debug"))
        with deferred_logs(show=verbose) as logs, native_output_captured(show=verbose):
            try:
                result = self._invoke(ctx)
            except BaseException:
                logs.discard()
                raise
        return result

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:  # type: ignore[override]
        """Click's ``main``, but a usage error is one ``error:`` line naming the option (exit 2), not click's usage
        block; ``standalone_mode=False`` keeps click's own behaviour (exceptions to the caller)."""
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)  # ctx.exit(n) returns n here
            sys.exit(code if isinstance(code, int) else 0)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except click.exceptions.NoArgsIsHelpError as exc:  # `real2sim` alone: the help, as click prints it
            exc.show()
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"error: {one_line(exc.format_message())}", err=True)
            sys.exit(exc.exit_code)

    def _invoke(self, ctx: click.Context):  # noqa: ANN202
        args = [*getattr(ctx, "_protected_args", []), *ctx.args]  # the sub-command line (for -o)
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except Real2SimError as exc:
            if ctx.params.get("debug"):
                raise
            text = one_line(str(exc))
            if isinstance(exc, ConfigError):
                text = _as_option(self, ctx, args, text)
            click.echo(f"error: {text}", err=True)
            ctx.exit(2 if isinstance(exc, (NotBuiltError, OptionError)) else 1)
        except OSError as exc:  # the machine, not real2sim: a full disk, a read-only folder, no permission
            if ctx.params.get("debug") or exc.errno not in USER_ERRNOS:
                raise
            where = exc.filename if exc.filename is not None else _out_arg(args)
            click.echo(f"error: {where}: cannot write ({exc.strerror or exc})", err=True)
            ctx.exit(1)
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
                f"internal error: {exc.__class__.__name__}: {one_line(str(exc))} (at {where}; rerun with --debug for the traceback)",
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


USER_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG,
                         errno.ENAMETOOLONG, errno.ENOTDIR, errno.EISDIR, errno.ELOOP})  # fmt: skip
"""Errors of the file system a user can act on (free space, permissions, a path): one ``error:`` line."""


def _as_option(group: click.Group, ctx: click.Context, args: list[str], text: str) -> str:
    """A config error that starts with a field name (``window_s must be positive``) names the option the user typed
    instead (``--window must be positive``)."""
    m = re.match(r"([a-z][a-z0-9_]*)\b", text)
    cmd: click.Command | None = group
    rest = list(args)
    while isinstance(cmd, click.Group) and rest:
        cmd = cmd.get_command(ctx, rest.pop(0))
    if m is None or cmd is None:
        return text
    for p in cmd.params:
        if p.name == m.group(1) and isinstance(p, click.Option):
            flag = max(p.opts, key=len)
            return flag + text[m.end() :]
    return text


def _out_arg(args: list[str]) -> str:
    """The ``-o`` value among a command's arguments (what a write without a file name was writing)."""
    for i, a in enumerate(args):
        if a in ("-o", "--out", "--output") and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(("--out=", "--output=")):
            return a.split("=", 1)[1]
    return "output"


def one_line(text: str) -> str:
    """``text`` on one line (a library's multi-line message joined), at most 2,000 characters."""
    text = " ".join(text.split())
    return text if len(text) <= 2000 else text[:1000] + " ... " + text[-995:]


def _register() -> None:
    from real2sim.cli import calibrate, demo, export, process, recon, replay, twin, validate

    for mod in (demo, recon, export, validate, calibrate, twin, replay, process):
        cli.add_command(mod.command)


_register()


def main() -> None:
    from real2sim.stopping import install_stop_handlers

    install_stop_handlers()
    cli.main(prog_name="real2sim")
