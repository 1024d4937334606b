"""``CalibrationReport`` (a fit and what its output folder shows) and ``write_outputs``: one report → result.json,
randomization.yaml, the calibrated model with its diff, changes.csv and the PNG/HTML report."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from real2sim.atomic import dumps_json, output_dir, write_text
from real2sim.calibration.params.resolved import Resolved
from real2sim.results import CalibrationResult, Split

Segment = tuple[np.ndarray, np.ndarray]
"""One window's prediction: sample times [s] (L,) and joint angles (L, nj), the initial sample included."""


@dataclass(frozen=True)
class LogPlot:
    """One log's measured joint angles and its windows simulated before and after calibration."""

    file: str
    split: Split
    joint_names: tuple[str, ...]
    time: np.ndarray
    qpos: np.ndarray
    before: tuple[Segment, ...]
    after: tuple[Segment, ...]

    @property
    def image_name(self) -> str:
        """File name of its PNG: ``<log stem>_<split>.png``."""
        return f"{self.file.split('.')[0]}_{self.split}.png"


@dataclass(frozen=True)
class CalibrationReport:
    """A calibration's result with what its outputs need: the model file, the resolved parameters, the plots."""

    result: CalibrationResult
    model_path: Path
    params: tuple[Resolved, ...]
    plots: tuple[LogPlot, ...] = ()


def write_outputs(
    report: CalibrationReport,
    out_dir: Path,
    plots: bool = True,
    *,
    overwrite: bool = False,
    inputs: Iterable[str | Path | None] = (),
) -> None:
    """Write the report into ``out_dir`` atomically (``atomic.output_dir``); ``plots``: also the PNGs and report.html."""
    import yaml

    from real2sim.calibration.outputs.report import plot_log, write_html
    from real2sim.calibration.outputs.writeback import (
        calibrated_mjcf,
        calibrated_urdf,
        change_table,
        text_diff,
    )

    res = report.result
    params = list(report.params)
    model_path = report.model_path
    with output_dir(out_dir, overwrite=overwrite, inputs=inputs) as out:
        write_text(out / "result.json", dumps_json(res.to_json()))
        write_text(
            out / "randomization.yaml",
            yaml.safe_dump({k: [v[0], v[1]] for k, v in res.randomization.items()}, sort_keys=True),
        )
        stem = model_path.stem
        if model_path.suffix.lower() == ".urdf":
            after_urdf = calibrated_urdf(model_path, params, res.values)
            write_text(out / f"{stem}_calibrated.urdf", after_urdf)
            write_text(out / "model.diff", text_diff(model_path.read_text(), after_urdf, model_path.name))
        mjcf = calibrated_mjcf(model_path, params, res.values)
        write_text(out / f"{stem}_calibrated.xml", mjcf)
        if model_path.suffix.lower() != ".urdf":
            import mujoco

            orig = mujoco.MjSpec.from_file(str(model_path)).to_xml()
            write_text(out / "model.diff", text_diff(orig, mjcf, f"{stem}.xml"))
        write_text(out / "changes.csv", change_table(params, res.initial, res.values))
        if plots:
            for lp in report.plots:
                plot_log(
                    out / lp.image_name,
                    f"{lp.file} ({lp.split})",
                    lp.joint_names,
                    lp.time,
                    lp.qpos,
                    lp.before,
                    lp.after,
                )
            write_html(out / "report.html", res, [lp.image_name for lp in report.plots])
