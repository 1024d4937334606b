"""Explicit signal-processing steps: resampling, zero-phase Butterworth filtering, differentiation."""

from __future__ import annotations

from typing import cast

import numpy as np


def butter_filtfilt(x: np.ndarray, wn: float, order: int = 3) -> np.ndarray:
    """Zero-phase low-pass Butterworth along axis 0; ``wn`` is the cutoff as a fraction of Nyquist (0 < wn < 1)."""
    from scipy.signal import butter, filtfilt

    if not 0.0 < wn < 1.0:
        raise ValueError(f"Butterworth cutoff Wn must be in (0, 1), got {wn}")
    b, a = cast(tuple[np.ndarray, np.ndarray], butter(order, wn))  # output='ba'; scipy is unannotated
    x = np.asarray(x, dtype=float)
    padlen = min(3 * max(len(a), len(b)), x.shape[0] - 1)
    return filtfilt(b, a, x, axis=0, padlen=padlen)


def differentiate(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Second-order accurate derivative of ``x`` (N, ...) with respect to (possibly uneven) time ``t``."""
    return np.gradient(np.asarray(x, dtype=float), np.asarray(t, dtype=float), axis=0)


def resample(t: np.ndarray, x: np.ndarray, t_new: np.ndarray, hold: bool = False) -> np.ndarray:
    """Values of ``x`` (N, k) at ``t_new``: linear interpolation, or zero-order hold when ``hold``."""
    x = np.asarray(x, dtype=float)
    if hold:
        k = np.clip(np.searchsorted(t, t_new, side="right") - 1, 0, len(t) - 1)
        return x[k]
    if x.ndim == 1:
        return np.interp(t_new, t, x)
    return np.stack([np.interp(t_new, t, x[:, j]) for j in range(x.shape[1])], axis=1)


def uniform_times(t: np.ndarray, rate: float) -> np.ndarray:
    """A uniform time grid at ``rate`` [Hz] spanning ``t``."""
    n = int(np.floor((t[-1] - t[0]) * rate + 1e-9)) + 1
    return t[0] + np.arange(n) / rate


def held_shifted_mean(
    t_log: np.ndarray, u_log: np.ndarray, delay: float, t0: np.ndarray, h: float
) -> np.ndarray:
    """Mean over each [t0, t0 + h] of the zero-order-held signal ``u_log`` (N,) applied ``delay`` s late.

    Before the first sample the first value holds, after the last the last. Continuous, piecewise linear in
    ``delay`` — so a delay can be fitted by a gradient method, unlike a shift rounded to whole steps.
    """
    t_log = np.asarray(t_log, dtype=float)
    u_log = np.asarray(u_log, dtype=float)
    cum = np.concatenate([[0.0], np.cumsum(u_log[:-1] * np.diff(t_log))])

    def integral(s: np.ndarray) -> np.ndarray:
        k = np.clip(np.searchsorted(t_log, s, side="right") - 1, 0, len(t_log) - 1)
        val = cum[k] + u_log[k] * (s - t_log[k])
        return np.where(s < t_log[0], u_log[0] * (s - t_log[0]), val)

    a = np.asarray(t0, dtype=float) - delay
    return (integral(a + h) - integral(a)) / h


def despike(tr, threshold: float):
    """Drop isolated samples whose position jumps by more than ``threshold`` from both neighbours while the
    neighbours agree (sensor read errors); returns the trajectory without those rows."""
    from dataclasses import replace

    q = np.asarray(tr.qpos, float)
    if q.shape[0] < 3:
        return tr
    bad = np.zeros(q.shape[0], bool)
    d_prev = np.abs(q[1:-1] - q[:-2])
    d_next = np.abs(q[1:-1] - q[2:])
    d_nb = np.abs(q[2:] - q[:-2])
    bad[1:-1] = np.any((d_prev > threshold) & (d_next > threshold) & (d_nb < threshold), axis=1)
    bad[0] = np.any(np.abs(q[0] - q[1]) > threshold)
    bad[-1] = np.any(np.abs(q[-1] - q[-2]) > threshold)
    if not bad.any():
        return tr
    keep = ~bad

    def sel(a):
        return None if a is None else np.asarray(a)[keep]

    return replace(
        tr,
        time=tr.time[keep],
        qpos=q[keep],
        qvel=sel(tr.qvel),
        ctrl=sel(tr.ctrl),
        torque=sel(tr.torque),
        enable=sel(tr.enable),
        object_poses={k: v[keep] for k, v in tr.object_poses.items()},
    )
