"""`real2sim process SESSION/ -o OUT`: every stage a capture session supports."""

from __future__ import annotations

from pathlib import Path

import click

from real2sim.process import STAGES


@click.command("process")
@click.argument("session", type=click.Path(path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path), help="Output folder.")
@click.option("--stages", default=",".join(STAGES), show_default=True, help="Comma list of stages to run.")
@click.option("--workers", default=0, show_default=True, help="Worker processes (0 = one per core).")
@click.option("--force", is_flag=True, help="Re-run stages whose inputs and options are unchanged.")
def command(session: Path, output: Path, stages: str, workers: int, force: bool) -> None:
    """Reconstruct, export and calibrate from a capture session folder; unchanged stages are reused."""
    from rich.console import Console

    from real2sim.process import ProcessCfg, run_process

    res = run_process(
        ProcessCfg(
            session_dir=session,
            out_dir=output,
            stages=tuple(s.strip() for s in stages.split(",") if s.strip()),
            workers=workers,
            force=force,
        )
    )
    console = Console()
    for s in res.stages:
        state = "reused" if s.reused else f"{s.seconds:.1f} s"
        console.print(f"{s.name:10s} {state:>10s}  {s.output}")
    for n in res.notes:
        console.print(f"note: {n}")
