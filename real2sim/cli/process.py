"""`real2sim process SESSION... -o OUT`: every stage each capture session supports."""

from __future__ import annotations

from pathlib import Path

import click

from real2sim.pipeline.process import STAGES


@click.command("process")
@click.argument("sessions", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    "--output",
    "output",
    required=True,
    type=click.Path(path_type=Path),
    help="Output folder (with several sessions: one sub-folder per session).",
)
@click.option("--stages", default=",".join(STAGES), show_default=True, help="Comma list of stages to run.")
@click.option("--workers", default=0, show_default=True, help="Worker processes (0 = one per core).")
@click.option(
    "--ray",
    default=None,
    metavar="ADDRESS",
    help="Run sessions on Ray: 'local', 'auto' or a cluster address (extra real2sim[ray]).",
)
@click.option("--force", is_flag=True, help="Re-run stages whose inputs and options are unchanged.")
def command(
    sessions: tuple[Path, ...], output: Path, stages: str, workers: int, ray: str | None, force: bool
) -> None:
    """Reconstruct, export and calibrate from capture session folders; unchanged stages are reused."""
    from rich.console import Console

    from real2sim.executor import ExecutorCfg
    from real2sim.pipeline.process import ProcessCfg, run_batch
    from real2sim.pipeline.session import load_session

    names = [load_session(s).name for s in sessions] if len(sessions) > 1 else [""]
    cfgs = [
        ProcessCfg(
            session_dir=s,
            out_dir=output / n if n else output,
            stages=tuple(x.strip() for x in stages.split(",") if x.strip()),
            workers=workers,
            force=force,
        )
        for s, n in zip(sessions, names, strict=True)
    ]
    results = run_batch(cfgs, ExecutorCfg(workers=workers, ray=ray))
    console = Console()
    for res in results:
        if len(results) > 1:
            console.print(f"[bold]{res.session.name}[/] -> {res.out_dir}")
        for s in res.stages:
            state = "reused" if s.reused else f"{s.seconds:.1f} s"
            console.print(f"{s.name:10s} {state:>10s}  {s.output}")
        for n in res.notes:
            console.print(f"note: {n}")
