"""`real2sim calibrate MODEL --log FILE... --map MAP.toml --fit PARAM... [--holdout FILE...] -o OUT_DIR [--json]`."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("calibrate")
@click.argument("model", type=click.Path(path_type=Path))
@click.option("--log", "logs", multiple=True, required=True, type=click.Path(path_type=Path),
              help="Training log (repeatable).")
@click.option("--map", "map_path", required=True, type=click.Path(path_type=Path),
              help="TOML map from log columns to model joints/actuators.")
@click.option("--fit", "fit", multiple=True, required=True,
              help="Parameter to fit, e.g. 'joint:*.damping', 'delay:*' (repeatable).")
@click.option("--holdout", multiple=True, type=click.Path(path_type=Path), help="Held-out log (repeatable).")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Output folder.")
@click.option("--method", type=click.Choice(["windows", "inverse", "inverse+windows"]), default="windows",
              show_default=True, help="Trajectory matching, inverse-dynamics least squares, or both.")
@click.option("--window", "window_s", type=float, default=0.5, show_default=True,
              help="Multiple-shooting window [s].")
@click.option("--no-report", is_flag=True, help="Skip the PNG/HTML report.")
@click.option("--json", "as_json", is_flag=True, help="Print result.json to stdout.")
def command(model: Path, logs: tuple[Path, ...], map_path: Path, fit: tuple[str, ...], holdout: tuple[Path, ...],
            out_dir: Path, method: str, window_s: float, no_report: bool, as_json: bool) -> None:
    """Fit friction, inertia, actuator and delay parameters of MODEL to robot logs."""
    from real2sim.calibration.run import CalibrateCfg, run_calibrate

    cfg = CalibrateCfg(model=model, logs=logs, map=map_path, fit=fit, holdout=holdout, out_dir=out_dir,
                       method=method, window_s=window_s, report=not no_report)
    res = run_calibrate(cfg)
    if as_json:
        click.echo((out_dir / "result.json").read_text(), nl=False)
        return
    for p, v, s in zip(res.params, res.values, res.stderr, strict=True):
        click.echo(f"{p.name:40s} {v:12.6g} ± {s:.3g}")
    click.echo(f"cost {res.cost_initial:.6g} -> {res.cost_final:.6g}")
    for le in res.logs:
        click.echo(f"{le.file:30s} {le.split:8s} rmse_qpos {le.rmse_qpos:.4g} rad  rmse_qvel {le.rmse_qvel:.4g} rad/s")
    for w in res.warnings:
        click.echo(f"warning: {w}", err=True)
    click.echo(f"wrote {out_dir}")
