"""Physically consistent rigid-body inertial parameters.

A body's inertial parameters are physical exactly when its 4×4 pseudo-inertia ``J = [[Σ, h], [hᵀ, m]]``
(``Σ`` the second moment of the mass distribution, ``h = m c``) is positive definite (Wensing et al. 2017). About
the centre of mass, in the principal frame MuJoCo stores (``body_iquat``), ``J`` is diagonal:
``diag(a, b, c, m)`` with second moments ``a, b, c`` along the principal axes and principal moments
``I = (b + c, a + c, a + b)``. Fitting ``log m`` and ``log a, log b, log c`` (the log-Cholesky coordinates of
``J`` with the principal axes held fixed, Rucker & Wensing 2022) and the centre of mass freely makes every iterate a
physical rigid body: positive mass and principal moments that satisfy the triangle inequality by construction.

The inverse-dynamics torque is linear in the 10 standard parameters ``φ = (m, m c, I_origin (6))`` of each body;
``phi_of`` / ``set_phi`` convert between them and MuJoCo's (mass, ipos, iquat, principal inertia).
"""

from __future__ import annotations

import numpy as np

_SYM = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))


def second_moments(principal: np.ndarray) -> np.ndarray:
    """(a, b, c) from principal moments (I0, I1, I2): a = (I1 + I2 − I0)/2, …"""
    i0, i1, i2 = np.asarray(principal, float)
    return 0.5 * np.array([i1 + i2 - i0, i0 + i2 - i1, i0 + i1 - i2])


def principal_moments(sm: np.ndarray) -> np.ndarray:
    a, b, c = np.asarray(sm, float)
    return np.array([b + c, a + c, a + b])


def _quat_mat(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of a ``wxyz`` quaternion (not ``real2sim.transforms``: see docs/DECISIONS.md, Calibration)."""
    w, x, y, z = np.asarray(q, float) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def phi_from(mass: float, com: np.ndarray, principal: np.ndarray, iquat: np.ndarray) -> np.ndarray:
    """Standard parameters (m, m·c (3), inertia about the body origin: xx, yy, zz, xy, xz, yz)."""
    r = _quat_mat(iquat)
    c = np.asarray(com, float)
    i_c = r @ np.diag(principal) @ r.T
    i_o = i_c + mass * (float(c @ c) * np.eye(3) - np.outer(c, c))
    return np.concatenate([[mass], mass * c, [i_o[i, j] for i, j in _SYM]])


def phi_of(model, body: int) -> np.ndarray:
    return phi_from(
        float(model.body_mass[body]), model.body_ipos[body], model.body_inertia[body], model.body_iquat[body]
    )


def set_phi(model, body: int, phi: np.ndarray) -> None:
    """Write standard parameters into MuJoCo's fields (principal axes by eigendecomposition). Also used with
    non-physical φ for finite-difference regressor columns: MuJoCo's dynamics stay linear in φ there."""
    import mujoco

    m = float(phi[0])
    c = np.asarray(phi[1:4], float) / m
    i_o = np.zeros((3, 3))
    for k, (i, j) in enumerate(_SYM):
        i_o[i, j] = i_o[j, i] = phi[4 + k]
    i_c = i_o - m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    w, v = np.linalg.eigh(i_c)
    if np.linalg.det(v) < 0:
        v[:, 0] = -v[:, 0]
    q = np.zeros(4)
    # MuJoCo's conversion, not real2sim.transforms: bits and sign differ (docs/DECISIONS.md, Calibration)
    mujoco.mju_mat2Quat(q, v.ravel())
    model.body_mass[body] = m
    model.body_ipos[body] = c
    model.body_inertia[body] = w
    model.body_iquat[body] = q
    model.body_sameframe[body] = (
        0  # the compiler's "inertial frame = body frame" shortcut would ignore ipos/iquat
    )


def pseudo_inertia(phi: np.ndarray) -> np.ndarray:
    """4×4 pseudo-inertia about the body origin; positive definite ⇔ physically realisable."""
    i_o = np.zeros((3, 3))
    for k, (i, j) in enumerate(_SYM):
        i_o[i, j] = i_o[j, i] = phi[4 + k]
    sigma = 0.5 * np.trace(i_o) * np.eye(3) - i_o
    out = np.zeros((4, 4))
    out[:3, :3] = sigma
    out[:3, 3] = out[3, :3] = phi[1:4]
    out[3, 3] = phi[0]
    return out


def is_physical(phi: np.ndarray, tol: float = 0.0) -> bool:
    return bool(np.linalg.eigvalsh(pseudo_inertia(phi))[0] > tol)


class Reparam:
    """Maps fitted values (model units) to internal coordinates in which every point is physical: the three
    principal moments of a body (``body:NAME.inertia[0..2]``, all fitted together) become ``log a, log b, log c``.
    Every other parameter passes through unchanged. Bounds of inertia components are generous multiples of the
    initial second moments (``span``), the spec's own per-moment bounds are not applicable in these coordinates."""

    def __init__(self, params: list, x0: np.ndarray, span: float = 1e3):
        self.n = len(params)
        self.triplets: list[tuple[int, int, int]] = []
        by_body: dict[str, dict[int, int]] = {}
        for i, p in enumerate(params):
            if p.kind == "body" and p.attribute == "inertia":
                by_body.setdefault(p.element, {})[p.index] = i
        for comps in by_body.values():
            if len(comps) == 3:
                self.triplets.append((comps[0], comps[1], comps[2]))
        self.span = span
        self.ref = {
            t: np.maximum(second_moments(x0[list(t)]), 1e-9 * max(float(np.max(x0[list(t)])), 1e-12))
            for t in self.triplets
        }

    @property
    def active(self) -> bool:
        return bool(self.triplets)

    def to_internal(self, x: np.ndarray) -> np.ndarray:
        z = np.array(x, float)
        for t in self.triplets:
            sm = second_moments(x[list(t)])
            z[list(t)] = np.log(np.maximum(sm, 1e-6 * self.ref[t]))
        return z

    def to_values(self, z: np.ndarray) -> np.ndarray:
        x = np.array(z, float)
        for t in self.triplets:
            x[list(t)] = principal_moments(np.exp(z[list(t)]))
        return x

    def bounds(self, lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = np.array(lower, float), np.array(upper, float)
        for t in self.triplets:
            lo[list(t)] = np.log(self.ref[t] / self.span)
            hi[list(t)] = np.log(self.ref[t] * self.span)
        return lo, hi

    def log_mask(self, log_mask: np.ndarray) -> np.ndarray:
        out = np.array(log_mask, bool)
        for t in self.triplets:
            out[list(t)] = False
        return out

    def wrap(self, fun):
        """A batched residual of values → the same residual of internal coordinates."""

        def f(batch: np.ndarray) -> np.ndarray:
            return fun(np.stack([self.to_values(z) for z in np.atleast_2d(batch)]))

        return f


def fit_physical(
    fun,
    params: list,
    x0: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    log_mask: np.ndarray,
    max_nfev: int = 60,
):
    """``fit_bounded`` of a batched residual over ``Reparam`` coordinates (every iterate a physical body); the
    returned values and Jacobian are in model units again."""
    from dataclasses import replace

    from real2sim.calibration.fitting.least_squares import fit_bounded

    rp = Reparam(params, np.asarray(x0, float))
    if not rp.active:
        return fit_bounded(fun, x0, lower, upper, log_mask, max_nfev=max_nfev)
    lo, hi = rp.bounds(lower, upper)
    z0 = np.clip(rp.to_internal(np.asarray(x0, float)), lo, hi)
    out = fit_bounded(rp.wrap(fun), z0, lo, hi, rp.log_mask(log_mask), max_nfev=max_nfev)
    z = out.values
    values = rp.to_values(z)
    # chain rule: dz/dv for each triplet is diag(1/s) · d(second moments)/d(principal moments)
    dzdv = np.eye(len(values))
    smap = 0.5 * np.array([[-1.0, 1.0, 1.0], [1.0, -1.0, 1.0], [1.0, 1.0, -1.0]])
    for t in rp.triplets:
        sm = np.exp(z[list(t)])
        dzdv[np.ix_(t, t)] = smap / sm[:, None]
    return replace(out, values=values, jac=out.jac @ dzdv)
