"""The stage runner of ``process``: runs a stage unless ``run.json`` records it finished with the same key, and keeps
a ``StageRun`` for each stage (its output, seconds, whether it was reused, its summary)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from real2sim.pipeline.cache import RunRecord
from real2sim.pipeline.config import ProcessCfg
from real2sim.pipeline.summary import SUMMARY_TYPES, StageSummary


@dataclass(frozen=True)
class StageRun:
    """One stage of a process run: where it wrote, how long it took, whether it was reused, what it found."""

    name: str
    output: Path
    seconds: float
    reused: bool
    summary: StageSummary


class StageRunner:
    """Runs the stages of one ``process`` run into ``cfg.out_dir``, reusing each whose ``run.json`` key matches, and
    keeps a ``StageRun`` per stage."""

    def __init__(self, cfg: ProcessCfg):
        self.cfg = cfg
        self.out = Path(cfg.out_dir).absolute()
        self.record = RunRecord(self.out / "run.json")
        self.runs: list[StageRun] = []

    def reused(self, name: str, output: Path, key: str) -> StageSummary | None:
        """The summary ``run.json`` holds for this stage if it finished with ``key`` and ``output`` exists."""
        prev = None if self.cfg.force or not output.exists() else self.record.finished(name, key)
        if prev is not None:
            try:
                return SUMMARY_TYPES[name].from_json(prev)
            except (KeyError, TypeError):
                pass  # a summary from an older real2sim: run the stage again
        return None

    def run(self, name: str, output: Path, key: str, work: Callable[[], StageSummary]) -> None:
        """Run ``work`` unless ``run.json`` says this stage finished with ``key`` and ``output`` exists."""

        def timed() -> tuple[StageSummary, float]:
            t0 = time.perf_counter()
            return work(), time.perf_counter() - t0

        self.run_timed(name, output, key, timed)

    def run_timed(
        self, name: str, output: Path, key: str, work: Callable[[], tuple[StageSummary, float]]
    ) -> None:
        """``run`` for work that measures its own seconds (work done in another process)."""
        t0 = time.perf_counter()
        prev = self.reused(name, output, key)
        if prev is not None:
            self.runs.append(StageRun(name, output, time.perf_counter() - t0, True, prev))
            return
        summary, seconds = work()
        self.runs.append(StageRun(name, output, seconds, False, summary))
        self.record.record(name, key, output, summary.to_json())
