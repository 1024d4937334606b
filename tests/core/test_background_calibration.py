"""``process`` calibrates in a process of its own beside recon and export: the same bytes as calibrating here, the
same error when it fails, and nothing left behind when another stage fails while it runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from real2sim.errors import InputError
from real2sim.pipeline.process import ProcessCfg, run_process


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture()
def session(sample_data: Path, tmp_path: Path) -> Path:
    """The sample session's robot only (its calibration with fewer windows: a quicker fit, the same code path)."""
    s = tmp_path / "session"
    shutil.copytree(sample_data / "robot", s / "robot")
    shutil.copytree(sample_data / "logs", s / "logs")
    shutil.copytree(sample_data / "lidar", s / "lidar")
    text = (sample_data / "session.toml").read_text()
    (s / "session.toml").write_text(text.split("[photos]")[0] + "[robot]" + text.split("[robot]")[1])
    return s


def test_background_calibration_writes_the_same_bytes(session: Path, tmp_path: Path) -> None:
    kw = dict(stages=("calibrate",), calibration_max_windows=4)
    here = run_process(ProcessCfg(session_dir=session, out_dir=tmp_path / "here", workers=1, **kw))
    beside = run_process(ProcessCfg(session_dir=session, out_dir=tmp_path / "beside", workers=2, **kw))
    assert here.stage("calibrate").summary == beside.stage("calibrate").summary
    files = _files(tmp_path / "here" / "calibration")
    assert any(n.endswith(".png") for n in files) and "result.json" in files
    assert _files(tmp_path / "beside" / "calibration") == files
    assert beside.stage("calibrate").seconds > 0 and not beside.stage("calibrate").reused


def test_background_calibration_error_is_the_same_error(session: Path, tmp_path: Path) -> None:
    (session / "logs" / "excite_01.csv").write_text("time,not,a,log\n1,2\n")
    errors = []
    for workers in (1, 2):
        with pytest.raises(InputError) as exc:
            run_process(ProcessCfg(session_dir=session, out_dir=tmp_path / f"w{workers}", stages=("calibrate",),
                                   workers=workers))  # fmt: skip
        errors.append(str(exc.value).replace(f"w{workers}", "w"))
    assert errors[0] == errors[1] and "excite_01.csv" in errors[0]


def test_a_failing_recon_stops_the_background_calibration(session: Path, tmp_path: Path) -> None:
    (session / "lidar" / "scan_00.ply").write_bytes(
        b"ply\nformat ascii 1.0\nelement vertex 5\nend_header\n1 2\n"
    )
    out = tmp_path / "out"
    with pytest.raises(InputError, match="scan_00.ply"):
        run_process(ProcessCfg(session_dir=session, out_dir=out, workers=2))
    assert not (out / "calibration").exists()
    assert not out.exists() or not [p.name for p in out.iterdir() if p.name.startswith(".")]
