"""Bounded nonlinear least squares (scipy ``least_squares``, trust-region reflective) with a batched
finite-difference Jacobian, and Jacobian-based uncertainty: standard errors, correlation, unidentifiable groups."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

BatchFn = Callable[[np.ndarray], np.ndarray]  # (C, P) values -> (C, M) residuals


@dataclass(frozen=True)
class FitOutput:
    values: np.ndarray
    cost_initial: float
    cost_final: float
    jac: np.ndarray  # (M, P) d residual / d value at the optimum
    residual: np.ndarray
    nfev: int
    njev: int


def _to_z(v: np.ndarray, log_mask: np.ndarray) -> np.ndarray:
    return np.where(log_mask, np.log(np.maximum(v, 1e-300)), v)


def _to_v(z: np.ndarray, log_mask: np.ndarray) -> np.ndarray:
    return np.where(log_mask, np.exp(z), z)


def cost_of(r: np.ndarray) -> float:
    """The cost everyone is compared on: 0.5 × sum of squared residuals."""
    return 0.5 * float(np.dot(r, r))


def fit_bounded(
    fun: BatchFn,
    x0: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    log_mask: np.ndarray,
    max_nfev: int = 60,
    rel_step: float = 1e-3,
    ftol: float = 1e-10,
    xtol: float = 1e-10,
) -> FitOutput:
    from scipy.optimize import least_squares

    log_mask = np.asarray(log_mask, bool)
    lo_z = _to_z(lower, log_mask)
    hi_z = _to_z(upper, log_mask)
    rng = np.where(np.isfinite(hi_z - lo_z), hi_z - lo_z, 1.0)
    z0 = np.clip(_to_z(np.asarray(x0, float), log_mask), lo_z, hi_z)
    cache: dict[bytes, np.ndarray] = {}
    counts = {"f": 0, "j": 0}

    def f(z: np.ndarray) -> np.ndarray:
        key = z.tobytes()
        if key not in cache:
            counts["f"] += 1
            cache.clear()
            cache[key] = fun(_to_v(z, log_mask)[None, :])[0]
        return cache[key]

    def steps(z: np.ndarray) -> np.ndarray:
        h = rel_step * np.maximum(np.abs(z), 1e-2 * rng)
        h = np.where(log_mask, rel_step, h)
        return np.where(z + h > hi_z, -h, h)

    def jac(z: np.ndarray) -> np.ndarray:
        counts["j"] += 1
        h = steps(z)
        zs = z[None, :] + np.diag(h)
        r = fun(_to_v(zs, log_mask))
        return ((r - f(z)[None, :]) / h[:, None]).T

    r0 = f(z0)
    cost0 = cost_of(r0)
    res = least_squares(
        f,
        z0,
        jac=jac,  # pyright: ignore[reportArgumentType]  (scipy leaves jac unannotated; pyright infers str from '2-point')
        bounds=(lo_z, hi_z),
        method="trf",
        x_scale="jac",
        max_nfev=max_nfev,
        ftol=ftol,
        xtol=xtol,
        gtol=1e-12,
    )
    v = _to_v(res.x, log_mask)
    # Jacobian with respect to the values (not the log), at the optimum
    jz = jac(res.x)
    dv_dz = np.where(log_mask, v, 1.0)
    jv = jz / dv_dz[None, :]
    return FitOutput(v, cost0, cost_of(res.fun), jv, res.fun, counts["f"], counts["j"])


@dataclass(frozen=True)
class Uncertainty:
    stderr: np.ndarray
    correlation: np.ndarray
    groups: tuple[tuple[str, ...], ...]  # unidentifiable parameter groups


def uncertainty(
    jac: np.ndarray, residual: np.ndarray, names: list[str], rel_tol: float = 1e-7
) -> Uncertainty:
    """Standard errors from s² (JᵀJ)⁻¹ with s² = |r|²/(m − p); directions the data cannot see (relative singular
    value of the column-normalised Jacobian below ``rel_tol``) make the parameters in them infinite, grouped."""
    m, p = jac.shape
    s2 = float(residual @ residual) / max(1, m - p)
    norms = np.linalg.norm(jac, axis=0)
    safe = np.where(norms > 0, norms, 1.0)
    jn = jac / safe[None, :]
    _, sv, vt = np.linalg.svd(jn, full_matrices=False)
    smax = sv[0] if sv.size and sv[0] > 0 else 1.0
    null = [vt[k] for k in range(p) if sv[k] / smax < rel_tol]
    for j in np.nonzero(norms == 0)[0]:
        e = np.zeros(p)
        e[j] = 1.0
        null.append(e)
    inf_mask = np.zeros(p, bool)
    groups: list[tuple[str, ...]] = []
    for vec in null:
        members = np.nonzero(np.abs(vec) > 0.05)[0]
        inf_mask[members] = True
        g = tuple(names[i] for i in members)
        if g and g not in groups:
            groups.append(g)
    keep = sv / smax >= rel_tol
    inv_n = (vt[keep].T / sv[keep] ** 2) @ vt[keep]
    cov = s2 * inv_n / np.outer(safe, safe)
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    se[inf_mask] = np.inf
    d = np.sqrt(np.maximum(np.diag(cov), 1e-300))
    corr = cov / np.outer(d, d)
    corr[inf_mask, :] = np.nan
    corr[:, inf_mask] = np.nan
    np.fill_diagonal(corr, 1.0)
    return Uncertainty(se, np.clip(np.nan_to_num(corr, nan=0.0), -1, 1), tuple(groups))
