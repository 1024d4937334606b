"""Stage keys and summaries of ``process``: the options hashed are what run.json keys always hashed; summaries
round-trip through JSON unchanged."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from real2sim.pipeline.cache import RunRecord, hashed_options, stage_key
from real2sim.pipeline.summary import (
    CalibrationSummary,
    CheckSummary,
    LogSummary,
    ObjectSummary,
    PackageSummary,
    ParamSummary,
    SceneSummary,
)

# The path fields the hand-kept list dropped before the list was derived from the annotations.
_DROPPED = ("out_dir", "scene_dir", "inputs", "model", "logs", "holdout", "map", "poses", "image_dir",
            "known_distance", "package", "log_models", "overwrite")  # fmt: skip


def _stage_cfgs() -> list[object]:
    from real2sim.calibration.config import CalibrateCfg
    from real2sim.export.config import ExportCfg
    from real2sim.recon.photos.run import PhotosReconCfg
    from real2sim.recon.pointcloud.config import PointCloudReconCfg
    from real2sim.recon.splats.run import SplatReconCfg

    p = Path("/data/x")
    return [
        PointCloudReconCfg(inputs=(p,), out_dir=p, poses=p),
        PhotosReconCfg(image_dir=p, out_dir=p, known_distance=p),
        SplatReconCfg(input=p, out_dir=p),
        ExportCfg(scene_dir=p, out_dir=p, name="m"),
        CalibrateCfg(model=p, logs=(p,), map=p, fit=("joint:*.damping",), holdout=(p,), out_dir=p),
    ]


@pytest.mark.parametrize("cfg", _stage_cfgs(), ids=lambda c: type(c).__name__)
def test_hashed_options_are_the_historical_ones(cfg: object) -> None:
    old = dataclasses.asdict(cfg)
    for k in _DROPPED:
        old.pop(k, None)
    assert hashed_options(cfg) == old
    assert list(hashed_options(cfg)) == list(old)


def test_stage_key_depends_on_bytes_and_options(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("1")
    k = stage_key("recon", [f], {"x": 1})
    assert k == stage_key("recon", [f], {"x": 1}) != stage_key("recon", [f], {"x": 2})
    f.write_text("2")
    assert stage_key("recon", [f], {"x": 1}) != k


def test_run_record_round_trip(tmp_path: Path) -> None:
    rec = RunRecord(tmp_path / "run.json")
    assert rec.finished("recon", "k") is None
    rec.record("recon", "k", tmp_path / "scene", {"a": 1})
    again = RunRecord(tmp_path / "run.json")
    assert again.finished("recon", "k") == {"a": 1} and again.finished("recon", "other") is None


@pytest.mark.parametrize(
    "summary",
    [
        SceneSummary(
            "lidar", (ObjectSummary("box", (0.1, 0.2, 0.3), 0.006, True, (0.0, 0.1, 0.15)),), "plane"
        ),
        PackageSummary("m.xml", "scene.xml", None, (CheckSummary("compiles", True, ""),)),
        CalibrationSummary(
            {"joint:a.damping": ParamSummary(0.1, None)},
            2.0,
            1.0,
            {"log.csv": LogSummary("train", 0.01, 0.1)},
            ("w",),
        ),
    ],
    ids=lambda s: type(s).__name__,
)
def test_summaries_round_trip(summary: object) -> None:
    d = summary.to_json()  # type: ignore[attr-defined]
    assert type(summary).from_json(d) == summary  # type: ignore[attr-defined]
