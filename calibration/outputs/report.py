"""Report: per log, real vs simulated joint angles (windows re-initialised from the measured state) before and
after calibration, as PNGs and one HTML page with the error table and warnings."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np

from real2sim.atomic import write_bytes, write_text
from real2sim.results import CalibrationResult


def plot_log(path: Path, title: str, joint_names, t_meas, q_meas, segs_before, segs_after) -> None:
    """``segs_*``: list of (times, qpos (n, nj)) window predictions."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nj = len(joint_names)
    fig, axes = plt.subplots(nj, 1, figsize=(10, 2.6 * nj), sharex=True, squeeze=False)
    for j, name in enumerate(joint_names):
        ax = axes[j, 0]
        ax.plot(t_meas, q_meas[:, j], color="k", lw=1.2, label="real")
        for i, (t, q) in enumerate(segs_before):
            ax.plot(t, q[:, j], color="tab:red", lw=0.8, alpha=0.7, label="sim before" if i == 0 else None)
        for i, (t, q) in enumerate(segs_after):
            ax.plot(t, q[:, j], color="tab:blue", lw=0.8, label="sim after" if i == 0 else None)
        ax.set_ylabel(f"{name} [rad]")
        ax.grid(alpha=0.3)
    axes[0, 0].set_title(title)
    axes[0, 0].legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("time [s]")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, metadata={"Software": None})
    plt.close(fig)
    write_bytes(path, buf.getvalue())


def write_html(path: Path, res: CalibrationResult, images: list[str]) -> None:
    """One page: warnings, the parameter table, the per-log error table and the plots."""
    esc = html.escape
    out = [
        "<!doctype html><html><head><meta charset='utf-8'><title>real2sim calibration</title>",
        "<style>body{font-family:sans-serif}td,th{padding:2px 8px}.warn{color:#b00;font-weight:bold}</style>",
        "</head><body><h1>Calibration report</h1>",
    ]
    for w in res.warnings:
        out.append(f"<p class='warn'>WARNING: {esc(w)}</p>")
    kept = [p.name for p, i, v, s in zip(res.params, res.initial, res.values, res.stderr, strict=True)
            if not np.isfinite(s) and v == i]  # fmt: skip
    if kept:
        out.append(
            "<p class='warn'>Not identifiable from these logs, kept at the initial value and not written into "
            f"the calibrated model: {esc(', '.join(kept))}</p>"
        )
    out.append(
        "<h2>Parameters</h2><table><tr><th>name</th><th>initial</th><th>value</th><th>stderr</th></tr>"
    )
    for p, i, v, s in zip(res.params, res.initial, res.values, res.stderr, strict=True):
        out.append(
            f"<tr><td>{esc(p.name)}</td><td>{float(i):.6g}</td><td>{float(v):.6g}</td>"
            f"<td>{float(s):.3g}</td></tr>"
        )
    out.append(
        "</table><h2>Logs</h2><table><tr><th>log</th><th>split</th><th>RMSE qpos before</th>"
        "<th>RMSE qpos after [rad]</th><th>RMSE qvel after [rad/s]</th></tr>"
    )
    for le in res.logs:
        out.append(
            f"<tr><td>{esc(le.file)}</td><td>{le.split}</td><td>{le.rmse_qpos_initial:.4g}</td>"
            f"<td>{le.rmse_qpos:.4g}</td><td>{le.rmse_qvel:.4g}</td></tr>"
        )
    out.append("</table>")
    for img in images:
        out.append(f"<h3>{esc(img)}</h3><img src='{esc(img)}'>")
    out.append("</body></html>\n")
    write_text(path, "\n".join(out))


def segments(sim, qp: np.ndarray) -> dict[int, list]:
    """Window predictions grouped by log: {log index: [(times, qpos), ...]}, including the initial sample."""
    out: dict[int, list] = {}
    for w, k in enumerate(sim.win.log_index):
        s = sim.win.start[w]
        tr = sim.win.trajs[k]
        t = tr.time[s : s + sim.win.length]
        q = np.concatenate([tr.qpos[s][None], qp[w]], axis=0)
        out.setdefault(int(k), []).append((t, q))
    return out
