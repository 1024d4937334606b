"""The ``twin`` stage of ``process``: the session's robot composed into this run's package (``OUT/twin/``), with the
run's calibration applied when it has one, as ``real2sim twin`` does; reused when nothing it reads has changed."""

from __future__ import annotations

from typing import Any

from real2sim.pipeline.cache import hashed_options, stage_key
from real2sim.pipeline.session import Session
from real2sim.pipeline.summary import TwinSummary


def run_twin_stage(r: Any, s: Session) -> list[str]:
    """Compose ``OUT/twin`` from the session's robot and ``OUT/package`` (and ``OUT/calibration``); notes."""
    from real2sim.twin.config import TwinCfg

    rb = s.robot
    assert rb is not None
    pkg, cal = r.out / "package", r.out / "calibration"
    if not pkg.is_dir():
        return ["twin: no package in this run to compose the robot into"]
    cfg = TwinCfg(
        robot=rb.model,
        scene=pkg,
        out_dir=r.out / "twin",
        overwrite=r.cfg.overwrite,
        calibration=cal if (cal / "result.json").is_file() else None,
        base_pose=rb.base_pose,
    )
    inputs = [rb.model, rb.model.parent, pkg, *([cal] if cfg.calibration else [])]
    key = stage_key("twin", inputs, hashed_options(cfg))

    def work() -> TwinSummary:
        from real2sim.twin.run import run_twin

        return TwinSummary.of(run_twin(cfg).manifest)

    r.run("twin", r.out / "twin", key, work)
    return []
