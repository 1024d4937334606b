"""The picture of one replayed episode: per joint, the real follower's trace and the twin's (and its variations'),
with the tracking error in each panel's legend."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from real2sim.atomic import write_bytes

REAL, SIM, VARIED = "#111111", "#e8710a", "#4a7bd0"
"""Colours of the real trace, the twin's, and the variations' (tests find them by these pixels)."""


def plot_traces(
    path: Path,
    title: str,
    joints: tuple[str, ...],
    time: np.ndarray,
    real: np.ndarray,
    sim: np.ndarray,
    varied: list[np.ndarray],
    rmse: dict[str, float],
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = 2
    rows = (len(joints) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(12, 2.4 * rows), sharex=True, squeeze=False)
    for j, name in enumerate(joints):
        ax = axes[j // cols, j % cols]
        for k, v in enumerate(varied):
            ax.plot(time, v[:, j], color=VARIED, lw=0.8, alpha=0.6, label="variations" if k == 0 else None)
        ax.plot(time, real[:, j], color=REAL, lw=1.6, label="real")
        ax.plot(time, sim[:, j], color=SIM, lw=1.4, label=f"twin (RMSE {rmse[name]:.4f} rad)")
        ax.set_ylabel(f"{name} [rad]")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=7)
    for j in range(len(joints), rows * cols):
        axes[j // cols, j % cols].axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("time [s]")
    fig.suptitle(title)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, metadata={"Software": None})
    plt.close(fig)
    write_bytes(path, buf.getvalue())
