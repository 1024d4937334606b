"""``run_twin(TwinCfg) -> TwinResult`` (``real2sim twin``) and ``run_replay(ReplayCfg) -> ReplayResult``
(``real2sim replay``): the twin stage's entry points, each writing its folder atomically."""

from __future__ import annotations

import contextlib
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from real2sim.atomic import output_dir
from real2sim.outguard import check_output
from real2sim.progress import step
from real2sim.twin.config import ReplayCfg, TwinCfg


@dataclass(frozen=True)
class TwinResult:
    """The twin's folder (None when nothing was written) and its ``twin.json``."""

    path: Path | None
    manifest: dict
    seconds: float


def _twin_inputs(cfg: TwinCfg) -> list[Path | None]:
    return [cfg.robot, cfg.robot.parent, cfg.scene, cfg.calibration, cfg.marker_images, cfg.marker_cameras,
            cfg.icp_scan, cfg.icp_scene, cfg.cameras]  # fmt: skip


@contextlib.contextmanager
def _folder(out: Path | None, overwrite: bool, inputs: list):
    if out is None:
        with tempfile.TemporaryDirectory(prefix="real2sim-twin-") as tmp:
            yield Path(tmp)
        return
    with output_dir(out, overwrite=overwrite, inputs=inputs) as tmp:
        yield tmp


def run_twin(cfg: TwinCfg) -> TwinResult:
    """Compose, check and write the twin (``cfg.out_dir``)."""
    from real2sim.twin.build import build_twin
    from real2sim.twin.usd import write_twin_usd
    from real2sim.twin.write import write_twin

    cfg.validate()
    t0 = time.perf_counter()
    inputs = _twin_inputs(cfg)
    if cfg.out_dir is not None:
        check_output(cfg.out_dir, inputs, overwrite=cfg.overwrite)  # refused before any work
    with _folder(cfg.out_dir, cfg.overwrite, inputs) as tmp:
        with step("composing the twin"):
            twin = build_twin(cfg, tmp)
        usd = write_twin_usd(twin, tmp) if cfg.usd else {"file": None, "reason": "not asked for (--no-usd)"}
        doc = write_twin(twin, cfg, tmp, usd)
    return TwinResult(None if cfg.out_dir is None else Path(cfg.out_dir), doc, time.perf_counter() - t0)


def run_replay(cfg: ReplayCfg):
    """Replay the episodes in the twin; write replay.json, the traces and the dataset (``cfg.out_dir``)."""
    from real2sim.twin.batch import replay_all

    cfg.validate()
    inputs = [cfg.twin, cfg.episodes, cfg.map, cfg.lerobot_calibration]
    if cfg.out_dir is not None:
        check_output(cfg.out_dir, inputs, overwrite=cfg.overwrite)
    if cfg.out_dir is None:
        return replay_all(cfg, None)
    with output_dir(cfg.out_dir, overwrite=cfg.overwrite, inputs=inputs) as tmp:
        return replay_all(cfg, tmp)
