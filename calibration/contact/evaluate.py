"""Errors of a model on logged runs: over short windows from measured states, along the whole run, at rest."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from real2sim.calibration.contact.logs import MotionLog
from real2sim.calibration.contact.sim import Layout, Roller, make_windows


@dataclass(frozen=True)
class RunErrors:
    """One log's position errors in body sizes (first body; several bodies: their mean)."""

    file: str
    split: str
    window: float
    """Mean error at the end of each window started from the measured state (every sample)."""
    whole: float
    """Mean error along the run simulated from its first sample."""
    rest: float
    """Error at the run's last sample (where the body came to rest)."""

    def to_json(self) -> dict:
        return {
            "file": self.file,
            "split": self.split,
            "window": self.window,
            "whole": self.whole,
            "rest": self.rest,
        }


@dataclass(frozen=True)
class Evaluation:
    runs: tuple[RunErrors, ...]
    paths: tuple[np.ndarray, ...]
    """Per log the simulated poses (N, nb, 7) at its sample times."""
    window_t: tuple[np.ndarray, ...]
    """Per log the window start times and their errors (2, W)."""

    def mean(self, split: str, what: str) -> float:
        vals = [getattr(r, what) for r in self.runs if r.split == split]
        return float(np.mean(vals)) if vals else float("nan")


def evaluate(
    model, lay: Layout, roller: Roller, logs: list[MotionLog], splits: list[str], horizon: float
) -> Evaluation:
    sc = np.asarray(lay.scale)
    win = make_windows(model, lay, logs, horizon)
    end = roller.window_ends(model, lay, win)
    werr = (np.linalg.norm(end[..., :3] - win.target[..., :3], axis=-1) / sc[None]).mean(axis=1)
    paths = roller.whole(model, lay, logs)
    runs, wt = [], []
    for k, (log, path) in enumerate(zip(logs, paths, strict=True)):
        real = np.stack([log.pose[b][:, :3] for b in lay.bodies], axis=1)
        e = (np.linalg.norm(path[..., :3] - real, axis=-1) / sc[None]).mean(axis=1)
        sel = win.log_index == k
        runs.append(
            RunErrors(
                log.name,
                splits[k],
                float(werr[sel].mean()) if np.any(sel) else float("nan"),
                float(e.mean()),
                float(e[-1]),
            )
        )
        wt.append(np.stack([win.t0[sel], werr[sel]]))
    return Evaluation(tuple(runs), tuple(paths), tuple(wt))
