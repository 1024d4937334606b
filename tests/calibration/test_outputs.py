"""One typed report carries everything the output folder shows: ``calibrate`` returns it, ``write_outputs`` writes
it, and ``result.json`` is ``CalibrationResult.to_json()`` byte for byte (an unidentifiable delay as "inf")."""

from __future__ import annotations

import math
from pathlib import Path

from real2sim.atomic import dumps_json
from real2sim.calibration.outputs.write import write_outputs
from real2sim.calibration.run import CalibrateCfg, calibrate


def test_report_is_what_is_written(sample_data: Path, tmp_path: Path) -> None:
    logs = sample_data / "logs"
    cfg = CalibrateCfg(
        model=sample_data / "robot" / "double_pendulum.xml",
        logs=(logs / "excite_00.csv",),
        holdout=(logs / "excite_03.csv",),
        map=logs / "map.toml",
        fit=("joint:*.damping", "delay:*"),
        method="inverse",
        max_windows=4,
    )
    report = calibrate(cfg)
    res = report.result
    assert [(le.file, le.split) for le in res.logs] == [(p.file, p.split) for p in report.plots]
    assert [p.image_name for p in report.plots] == ["excite_00_train.png", "excite_03_holdout.png"]
    assert all(le.rmse_qpos_initial is not None and le.torque_r2 is not None for le in res.logs)
    doc = res.to_json()
    assert list(doc["parameters"]) == [p.name for p in res.params] == [p.name for p in report.params]
    for p, s in zip(res.params, res.stderr, strict=True):
        # inverse dynamics cannot see a delay: its standard error is infinite, written as "inf"
        assert (
            (doc["parameters"][p.name]["stderr"] == "inf")
            == (not math.isfinite(s))
            == p.name.startswith("delay:")
        )
    out = tmp_path / "out"
    write_outputs(report, out)
    assert (out / "result.json").read_text() == dumps_json(doc)
    html = (out / "report.html").read_text()
    for p in report.plots:
        assert (out / p.image_name).is_file() and p.image_name in html
    assert {f.name for f in out.iterdir()} >= {
        "result.json",
        "randomization.yaml",
        "changes.csv",
        "model.diff",
        "double_pendulum_calibrated.xml",
    }
    write_outputs(report, tmp_path / "bare", plots=False)
    assert not any(f.suffix in (".png", ".html") for f in (tmp_path / "bare").iterdir())
