"""Joint fit of contact parameters over many short windows (scipy least squares, batched MuJoCo rollouts)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from real2sim.calibration.contact import params as cp
from real2sim.calibration.contact.sim import Layout, Roller, Windows, quat_angle


@dataclass(frozen=True)
class Residual:
    """Window residual: end position error per body in body sizes, plus ``rot_weight`` × end angle error [rad]."""

    rot_weight: float = 0.0
    robust_scale: float = 0.05
    """soft-L1 scale (body sizes): errors above it count linearly, so a few chaotic impacts do not dominate."""


def model_at(base, params: list[cp.ContactParam], values: np.ndarray):
    """A copy of ``base`` with ``values`` set (fitted geoms given contact priority)."""
    import copy

    m = copy.copy(base)
    cp.apply(m, params, values)
    return m


def window_residual(roller: Roller, model, lay: Layout, win: Windows, res: Residual) -> np.ndarray:
    """(W, nb, 3 or 4) residual of a model on the windows."""
    end = roller.window_ends(model, lay, win)
    sc = np.asarray(lay.scale)[None, :, None]
    r = (end[..., :3] - win.target[..., :3]) / sc
    if res.rot_weight > 0:
        ang = quat_angle(end[..., 3:], win.target[..., 3:])[..., None] * res.rot_weight
        r = np.concatenate([r, ang], axis=-1)
    return r


@dataclass(frozen=True)
class FitOut:
    values: np.ndarray
    jac: np.ndarray
    """Jacobian of the (robust-weighted) residual in value space at the solution."""
    residual: np.ndarray
    nfev: int


def fit_windows(
    base,
    params: list[cp.ContactParam],
    x0: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    roller: Roller,
    lay: Layout,
    win: Windows,
    res: Residual,
    max_nfev: int = 30,
) -> FitOut:
    """Trust-region least squares in each parameter's free space (log / logit) within the bounds."""
    from scipy.optimize import least_squares

    z_lo, z_hi = cp.to_free(params, lower), cp.to_free(params, upper)
    z0 = np.clip(cp.to_free(params, x0), z_lo + 1e-9, z_hi - 1e-9)

    def f(z: np.ndarray) -> np.ndarray:
        return window_residual(roller, model_at(base, params, cp.from_free(params, z)), lay, win, res).ravel()

    out = least_squares(
        f,
        z0,
        bounds=(z_lo, z_hi),
        diff_step=0.05,
        ftol=1e-4,  # a relative cost change below this is noise next to the chaos of the windows
        max_nfev=max_nfev,
        loss="soft_l1",
        f_scale=res.robust_scale,
    )
    values = cp.from_free(params, out.x)
    # the robust loss's weights, so standard errors match what was minimised
    r = out.fun
    w = (1.0 + (r / res.robust_scale) ** 2) ** -0.25
    jac = (out.jac * w[:, None]) / cp.dvalue_dfree(params, values)[None, :]
    return FitOut(values, jac, r * w, int(out.nfev))
