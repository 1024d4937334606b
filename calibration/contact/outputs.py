"""Outputs of a contact fit: result.json, randomization.yaml, the calibrated MJCF and its diff, the report."""

from __future__ import annotations

import html
import math
from pathlib import Path

import numpy as np

from real2sim.atomic import dumps_json, output_dir, write_text
from real2sim.calibration.config import CalibrateCfg
from real2sim.calibration.contact.run import ContactReport, run_contact


def run_and_write(cfg: CalibrateCfg, lmap) -> ContactReport:
    """Fit, write the package (``--package``) and the output folder (``-o``)."""
    from dataclasses import replace

    if cfg.package is not None:
        from real2sim.calibration.contact.package import check_package

        check_package(Path(cfg.package))  # fail before fitting
    report = run_contact(cfg, lmap)
    if cfg.out_dir is not None:  # first: the package's MJCF may be the fitted model itself
        write_contact_outputs(report, Path(cfg.out_dir), plots=cfg.report)
    if cfg.package is not None:
        from real2sim.calibration.contact.package import write_contact_package

        notes = write_contact_package(Path(cfg.package), report)
        report = replace(report, warnings=report.warnings + tuple(notes))
    return report


def write_contact_outputs(report: ContactReport, out_dir: Path, plots: bool = True) -> None:
    import mujoco
    import yaml

    from real2sim.calibration.contact.mjcf import calibrated_xml
    from real2sim.calibration.outputs.writeback import text_diff

    keep = np.isfinite(report.stderr)
    mjcf = calibrated_xml(report.model_path, list(report.params), report.values, keep, report.cone)
    stem = report.model_path.stem
    with output_dir(out_dir) as out:
        write_text(out / "result.json", dumps_json(report.to_json()))
        write_text(
            out / "randomization.yaml",
            yaml.safe_dump({k: [v[0], v[1]] for k, v in report.randomization.items()}, sort_keys=True),
        )
        write_text(out / f"{stem}_calibrated.xml", mjcf)
        orig = mujoco.MjSpec.from_file(str(report.model_path)).to_xml()
        write_text(out / "model.diff", text_diff(orig, mjcf, f"{stem}.xml"))
        if plots:
            from real2sim.calibration.contact.plots import plot_errors, plot_paths

            hold = [k for k, r in enumerate(report.after.runs) if r.split == "holdout"]
            pool = hold or list(range(len(report.logs)))
            picks = [pool[int(i)] for i in np.linspace(0, len(pool) - 1, min(3, len(pool))).round()]
            plot_paths(out / "paths.png", report, sorted(set(picks)))
            plot_errors(out / "errors.png", report)
            write_text(out / "report.html", report_html(report, ["paths.png", "errors.png"]))


def report_html(report: ContactReport, images: list[str]) -> str:
    esc = html.escape
    out = [
        "<!doctype html><html><head><meta charset='utf-8'><title>real2sim contact calibration</title>",
        "<style>body{font-family:sans-serif}td,th{padding:2px 8px}.warn{color:#b00;font-weight:bold}</style>",
        "</head><body><h1>Contact calibration</h1>",
    ]
    out += [f"<p class='warn'>WARNING: {esc(w)}</p>" for w in report.warnings]
    out.append(
        "<table border=1><tr><th>parameter</th><th>initial</th><th>fitted</th><th>std. error</th></tr>"
    )
    for p, i, v, s in zip(report.params, report.initial, report.values, report.stderr, strict=True):
        se = f"{s:.3g}" if math.isfinite(s) else "not identifiable (prior kept)"
        out.append(f"<tr><td>{esc(p.name)}</td><td>{i:.6g}</td><td>{v:.6g}</td><td>{se}</td></tr>")
    out.append("</table>")
    if report.cone:
        out.append(f"<p>Friction cone: {esc(report.cone)}, in the fit and the calibrated model.</p>")
    out.append("<h2>Mean position error [body sizes]</h2><table border=1>")
    out.append("<tr><th>split</th><th>when</th><th>windows</th><th>whole run</th><th>at rest</th></tr>")
    for when in ("before", "after"):
        for split, e in report.summary(when).items():
            out.append(
                f"<tr><td>{split}</td><td>{when}</td><td>{e['window']:.4f}</td><td>{e['whole']:.4f}</td>"
                f"<td>{e['rest']:.4f}</td></tr>"
            )
    out.append("</table>")
    out += [f"<p><img src='{esc(i)}'></p>" for i in images]
    out.append("<h2>Per log</h2><table border=1><tr><th>log</th><th>split</th><th>windows</th><th>whole</th>")
    out.append("<th>rest</th></tr>")
    for r in report.after.runs:
        out.append(
            f"<tr><td>{esc(r.file)}</td><td>{r.split}</td><td>{r.window:.4f}</td><td>{r.whole:.4f}</td>"
            f"<td>{r.rest:.4f}</td></tr>"
        )
    out.append("</table></body></html>")
    return "\n".join(out) + "\n"


def echo_summary(report: ContactReport, as_json: bool) -> None:
    import click

    if as_json:
        click.echo(dumps_json(report.to_json()), nl=False)
        return
    for p, v, s in zip(report.params, report.values, report.stderr, strict=True):
        click.echo(f"{p.name:40s} {v:12.6g} ± {s:.3g}")
    click.echo(
        f"fit {report.fit_s:.1f} s ({report.fit_cpu_s:.1f} s CPU) over {report.windows} windows of {report.horizon:g} s"
    )
    if report.cone:
        click.echo(f"friction cone: {report.cone}, in the fit and the calibrated model")
    for when in ("before", "after"):
        for split, e in report.summary(when).items():
            click.echo(
                f"{split:8s} {when:6s} error [body sizes]: windows {e['window']:.4f}  whole {e['whole']:.4f}  "
                f"rest {e['rest']:.4f}"
            )
    chk = report.randomization_check
    if "holdout" in chk:
        click.echo(
            f"randomisation: {chk['holdout'][0]:.0%} of held-out rest positions inside the ensemble (band "
            f"{chk['holdout'][1]:.3g} sizes); ±20 % ranges: {chk['holdout_pm20'][0]:.0%} (band "
            f"{chk['holdout_pm20'][1]:.3g})"
        )
    for w in report.warnings:
        click.echo(f"warning: {w}", err=True)
