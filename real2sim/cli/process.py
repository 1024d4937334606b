"""`real2sim process SESSION... -o OUT`: every stage each capture session supports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from real2sim.cli.inputs import check_path
from real2sim.cli.options import Opt, options
from real2sim.executor import ExecutorCfg
from real2sim.pipeline.config import ProcessCfg
from real2sim.stdio import route_mujoco_warnings


@click.command("process")
@click.argument("sessions", nargs=-1, required=True, type=click.Path(path_type=Path))
@options(
    ProcessCfg,
    "out_dir",
    "overwrite",
    "stages",
    "workers",
    out_dir=Opt(("-o", "--out", "--output"), required=True),
    overwrite=Opt(("--overwrite",)),
)
@options(ExecutorCfg, "ray", ray=Opt(metavar="ADDRESS"))
@options(ProcessCfg, "force", "calibration_package", calibration_package=Opt(("--package/--no-package",)))
def command(sessions: tuple[Path, ...], out_dir: Path, ray: str | None, **params: Any) -> None:
    """Reconstruct, export and calibrate from capture session folders; unchanged stages are reused.

    With several sessions, OUT holds one sub-folder per session.
    """
    for s in sessions:
        check_path(s.resolve(), "dir", "no such session folder")
    from rich.console import Console
    from rich.markup import escape

    route_mujoco_warnings()  # the inputs are checked: MuJoCo may load now
    from real2sim.pipeline.process import run_batch
    from real2sim.pipeline.session import load_session

    names = [load_session(s).name for s in sessions] if len(sessions) > 1 else [""]
    cfgs = [
        ProcessCfg(session_dir=s, out_dir=out_dir / n if n else out_dir, **params)
        for s, n in zip(sessions, names, strict=True)
    ]
    if ray and len(cfgs) == 1:
        click.echo(f"note: one session runs in this process, not on the Ray cluster at {ray}")
    results = run_batch(cfgs, ExecutorCfg(workers=params["workers"], ray=ray))
    console = Console()
    for res in results:
        if len(results) > 1:
            console.print(f"[bold]{escape(res.session.name)}[/] -> {escape(str(res.out_dir))}")
        for s in res.stages:
            state = "reused" if s.reused else f"{s.seconds:.1f} s"
            console.print(f"{s.name:10s} {state:>10s}  {s.output}", markup=False, highlight=False)
        for n in res.notes:
            console.print(f"note: {n}", markup=False, highlight=False)
