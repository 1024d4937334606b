"""`real2sim calibrate MODEL --log FILE... --map MAP.toml --fit PARAM... [--holdout FILE...] -o OUT_DIR [--json]`."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("calibrate")
@click.argument("model", type=click.Path(path_type=Path))
@click.option(
    "--log",
    "logs",
    multiple=True,
    required=True,
    type=click.Path(path_type=Path),
    help="Training log (repeatable).",
)
@click.option(
    "--map",
    "map_path",
    required=True,
    type=click.Path(path_type=Path),
    help="TOML map from log columns to model joints/actuators.",
)
@click.option(
    "--fit",
    "fit",
    multiple=True,
    required=True,
    help="Parameter to fit, e.g. 'joint:*.damping', 'delay:*' (repeatable).",
)
@click.option("--holdout", multiple=True, type=click.Path(path_type=Path), help="Held-out log (repeatable).")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Output folder.")
@click.option(
    "--method",
    type=click.Choice(["windows", "inverse", "inverse+windows"]),
    default="windows",
    show_default=True,
    help="Trajectory matching, inverse-dynamics least squares, or both.",
)
@click.option(
    "--window", "window_s", type=float, default=0.5, show_default=True, help="Multiple-shooting window [s]."
)
@click.option(
    "--qvel-weight",
    type=float,
    default=0.05,
    show_default=True,
    help="Weight [s] of velocity errors against angle errors in the trajectory residual.",
)
@click.option(
    "--qvel-from-qpos",
    is_flag=True,
    help="Ignore logged velocities; derive them from qpos (Butterworth at --smooth-qvel or 0.1, then "
    "differentiation).",
)
@click.option(
    "--smooth-qvel",
    "smooth_qvel_wn",
    type=float,
    default=None,
    help="Zero-phase Butterworth cutoff (x Nyquist, order 3) for window-initial velocities.",
)
@click.option(
    "--velocity-filter",
    "velocity_filter_wn",
    type=float,
    default=0.02,
    show_default=True,
    help="Butterworth cutoff (x Nyquist) for velocities in inverse dynamics.",
)
@click.option(
    "--prior-weight",
    type=float,
    default=0.0,
    show_default=True,
    help="Inverse dynamics: pull towards the model's values (0: none).",
)
@click.option("--max-windows", type=int, default=None, help="Cap on training windows (spread evenly).")
@click.option("--no-report", is_flag=True, help="Skip the PNG/HTML report.")
@click.option("--json", "as_json", is_flag=True, help="Print result.json to stdout.")
def command(
    model: Path,
    logs: tuple[Path, ...],
    map_path: Path,
    fit: tuple[str, ...],
    holdout: tuple[Path, ...],
    out_dir: Path,
    method: str,
    window_s: float,
    qvel_weight: float,
    qvel_from_qpos: bool,
    smooth_qvel_wn: float | None,
    velocity_filter_wn: float,
    prior_weight: float,
    max_windows: int | None,
    no_report: bool,
    as_json: bool,
) -> None:
    """Fit friction, inertia, actuator and delay parameters of MODEL to robot logs."""
    from real2sim.calibration.run import CalibrateCfg, run_calibrate

    cfg = CalibrateCfg(
        model=model,
        logs=logs,
        map=map_path,
        fit=fit,
        holdout=holdout,
        out_dir=out_dir,
        method=method,
        window_s=window_s,
        report=not no_report,
        qvel_weight=qvel_weight,
        qvel_from_qpos=qvel_from_qpos,
        smooth_qvel_wn=smooth_qvel_wn,
        velocity_filter_wn=velocity_filter_wn,
        prior_weight=prior_weight,
        max_windows=max_windows,
    )
    res = run_calibrate(cfg)
    if as_json:
        click.echo((out_dir / "result.json").read_text(), nl=False)
        return
    for p, v, s in zip(res.params, res.values, res.stderr, strict=True):
        click.echo(f"{p.name:40s} {v:12.6g} ± {s:.3g}")
    click.echo(f"cost {res.cost_initial:.6g} -> {res.cost_final:.6g}")
    for le in res.logs:
        click.echo(
            f"{le.file:30s} {le.split:8s} rmse_qpos {le.rmse_qpos:.4g} rad  rmse_qvel {le.rmse_qvel:.4g} rad/s"
        )
    for w in res.warnings:
        click.echo(f"warning: {w}", err=True)
    click.echo(f"wrote {out_dir}")
