"""Report pictures of a contact fit: real against simulated paths (top and side view) and error against time."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from real2sim.atomic import write_bytes

REAL, BEFORE, AFTER = "#000000", "#d62728", "#1f77b4"


def _save(fig, path: Path) -> None:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, metadata={"Software": None})
    plt.close(fig)
    write_bytes(path, buf.getvalue())


def plot_paths(path: Path, report, picks: list[int]) -> None:
    """One row per picked log: top view (x, y) and side view (distance along the toss, z) of the first body."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(picks), 2, figsize=(10, 3.2 * len(picks)), squeeze=False)
    for row, k in enumerate(picks):
        log = report.logs[k]
        b = next(iter(log.pose))
        real = log.pose[b][:, :3]
        sims = (report.before.paths[k][:, 0, :3], report.after.paths[k][:, 0, :3])
        d0 = real[-1, :2] - real[0, :2]
        u = d0 / max(float(np.linalg.norm(d0)), 1e-9)
        for p, c, lab in (
            (real, REAL, "real"),
            (sims[0], BEFORE, "sim before"),
            (sims[1], AFTER, "sim fitted"),
        ):
            axes[row, 0].plot(p[:, 0], p[:, 1], color=c, lw=1.6, label=lab)
            axes[row, 0].plot(p[-1, 0], p[-1, 1], "o", color=c, ms=6)
            axes[row, 1].plot((p[:, :2] - real[0, :2]) @ u, p[:, 2], color=c, lw=1.6, label=lab)
        axes[row, 0].set_title(f"{log.name}: top view", fontsize=9)
        axes[row, 0].set_xlabel("x [m]")
        axes[row, 0].set_ylabel("y [m]")
        axes[row, 0].set_aspect("equal", adjustable="datalim")
        axes[row, 1].set_title(f"{log.name}: side view along the toss", fontsize=9)
        axes[row, 1].set_xlabel("distance [m]")
        axes[row, 1].set_ylabel("z [m]")
        for ax in axes[row]:
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)


def plot_errors(path: Path, report, split: str = "holdout") -> None:
    """Mean error (body sizes) against time on ``split``: each window's end error at its start time (left), the
    whole run simulated from its first sample (right); before and after the fit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    idx = [k for k, r in enumerate(report.after.runs) if r.split == split] or list(range(len(report.logs)))
    tmax = max(float(report.logs[k].time[-1]) for k in idx)
    edges = np.linspace(0.0, tmax, 25)
    mid = 0.5 * (edges[1:] + edges[:-1])
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    for ev, c, lab in ((report.before, BEFORE, "before"), (report.after, AFTER, "fitted")):
        t = np.concatenate([ev.window_t[k][0] for k in idx])
        e = np.concatenate([ev.window_t[k][1] for k in idx])
        tw, ew = [], []
        for k in idx:
            log = report.logs[k]
            b = next(iter(log.pose))
            tw.append(log.time)
            ew.append(np.linalg.norm(ev.paths[k][:, 0, :3] - log.pose[b][:, :3], axis=1) / report.scale)
        t2, e2 = np.concatenate(tw), np.concatenate(ew)
        for ax, tt, ee in ((axes[0], t, e), (axes[1], t2, e2)):
            which = np.digitize(tt, edges) - 1
            m = np.array([ee[which == i].mean() if np.any(which == i) else np.nan for i in range(mid.size)])
            ax.plot(mid, m, color=c, lw=2, marker="o", ms=3, label=lab)
    axes[0].set_title(f"{report.horizon:g} s windows from the measured state ({split})", fontsize=9)
    axes[1].set_title(f"whole run from the first sample ({split})", fontsize=9)
    for ax in axes:
        ax.set_xlabel("time [s]")
        ax.set_ylabel("position error [body sizes]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)
