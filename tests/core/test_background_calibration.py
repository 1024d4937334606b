"""``process`` calibrates in a single-threaded process of its own beside export's object workers: the same bytes as
calibrating here, the same error when it fails, and nothing left behind when the run stops it.
(``tests/core/test_demo.py`` runs the demo, which takes this route, end to end.)"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from real2sim.calibration.config import CalibrateCfg
from real2sim.errors import InputError
from real2sim.pipeline.background import Background
from real2sim.pipeline.process import calibration_summary


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _cfg(sample: Path, out: Path, logs: tuple[str, ...] = ("excite_00.csv", "excite_01.csv")) -> CalibrateCfg:
    return CalibrateCfg(
        model=sample / "robot" / "double_pendulum.xml",
        logs=tuple(sample / "logs" / n for n in logs),
        map=sample / "logs" / "map.toml",
        fit=("joint:*.damping", "joint:*.frictionloss"),
        out_dir=out,
        max_windows=4,
    )


def test_background_calibration_writes_the_same_bytes(sample_data: Path, tmp_path: Path) -> None:
    here = calibration_summary(_cfg(sample_data, tmp_path / "here"))
    beside, seconds = Background(
        calibration_summary, _cfg(sample_data, tmp_path / "beside"), "calibrate", 1
    ).result()
    assert beside == here and seconds > 0
    files = _files(tmp_path / "here")
    assert any(n.endswith(".png") for n in files) and "result.json" in files
    assert _files(tmp_path / "beside") == files


def test_background_error_is_the_same_error(sample_data: Path, tmp_path: Path) -> None:
    cfg = _cfg(sample_data, tmp_path / "out", logs=("excite_00.csv", "no_such_log.csv"))
    with pytest.raises(InputError) as here:
        calibration_summary(cfg)
    with pytest.raises(InputError) as beside:
        Background(calibration_summary, cfg, "calibrate", 1).result()
    assert str(beside.value) == str(here.value) and "no_such_log.csv" in str(here.value)


def test_a_stopped_background_calibration_leaves_nothing(sample_data: Path, tmp_path: Path) -> None:
    """Stopped at the worst moment, whatever the machine's speed: while it writes its output (its partial folder
    exists)."""
    out = tmp_path / "out"
    b = Background(calibration_summary, _cfg(sample_data, out / "calibration"), "calibrate", 1)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and b._proc.is_alive() and not list(out.glob(".calibration.partial-*")):
        time.sleep(0.002)
    writing = bool(list(out.glob(".calibration.partial-*")))
    b.cancel()
    assert writing, "the calibration ended before it was seen writing"
    assert not out.exists() or not list(out.iterdir())
