"""`real2sim validate PKG_DIR [--json]`: run the package checks; exit 0 only if all pass."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import click

from real2sim.cli.inputs import check_path
from real2sim.cli.options import build, options
from real2sim.export.config import ValidateCfg
from real2sim.stdio import route_mujoco_warnings


@click.command("validate")
@click.argument("pkg_dir", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON instead of a table.")
@options(ValidateCfg, *(f.name for f in fields(ValidateCfg)))
@click.pass_context
def command(ctx: click.Context, pkg_dir: Path, as_json: bool, **params: Any) -> None:
    """Compile, load and step the package in PKG_DIR and report every check."""
    check_path(pkg_dir, "dir", "no such package folder")
    route_mujoco_warnings()  # the inputs are checked: MuJoCo may load now
    from real2sim.atomic import dumps_json
    from real2sim.export.validate import validate_package

    checks = validate_package(pkg_dir, build(ValidateCfg, params))
    if as_json:
        click.echo(
            dumps_json(
                [
                    {
                        "name": c.name,
                        "passed": c.passed,
                        "skipped": c.skipped,
                        "detail": c.detail,
                        "value": c.value,
                        "limit": c.limit,
                    }
                    for c in checks
                ]
            ),
            nl=False,
        )
    else:
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        t = Table(title=escape(f"validate {pkg_dir}"))
        for col in ("check", "result", "detail"):
            t.add_column(col)
        for c in checks:
            t.add_row(
                escape(c.name),
                {"pass": "[green]pass[/]", "FAIL": "[red]FAIL[/]"}.get(c.result, escape(c.result)),
                escape(c.detail),
            )
        Console(width=140).print(t)
    failed = [c for c in checks if c.failed]
    skipped = sum(c.skipped for c in checks)
    if skipped and not as_json:
        click.echo(f"{skipped} of {len(checks)} checks skipped", err=True)
    if failed:
        if not as_json:
            first = failed[0]
            click.echo(
                f"error: {pkg_dir}: {len(failed)} of {len(checks)} checks failed; {first.name}: {first.detail}",
                err=True,
            )
        ctx.exit(1)
