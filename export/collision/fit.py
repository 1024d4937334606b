"""Least-squares refinement of a primitive to a scanned surface (robust to noise, rounded edges and closed holes)."""

from __future__ import annotations

import numpy as np


def _rotvec_matrix(w: np.ndarray) -> np.ndarray:
    """Rotation matrix of a rotation vector (Rodrigues)."""
    t = float(np.linalg.norm(w))
    if t < 1e-15:
        return np.eye(3)
    k = w / t
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(t) * kx + (1 - np.cos(t)) * kx @ kx


def signed_distance(kind: str, local: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Signed distance (< 0 inside) of points in the primitive's frame to a MuJoCo-sized primitive."""
    if kind == "box":
        q = np.abs(local) - size
        out = np.linalg.norm(np.maximum(q, 0), axis=1)
        return out + np.minimum(q.max(axis=1), 0)
    if kind == "sphere":
        return np.linalg.norm(local, axis=1) - size[0]
    rho = np.linalg.norm(local[:, :2], axis=1)
    if kind == "capsule":
        return np.hypot(rho, np.maximum(np.abs(local[:, 2]) - size[1], 0)) - size[0]
    q = np.column_stack([rho - size[0], np.abs(local[:, 2]) - size[1]])
    return np.linalg.norm(np.maximum(q, 0), axis=1) + np.minimum(q.max(axis=1), 0)


def refine_fit(
    kind: str, pts: np.ndarray, rot: np.ndarray, centre: np.ndarray, size: np.ndarray, scale: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rot, centre, size)`` of ``kind`` fitted to surface points ``pts`` by robust least squares (soft-L1 loss at
    ``scale`` [m], so noise, rounded edges and a closed-over underside pull little), from the given start."""
    from scipy.optimize import least_squares

    n = len(size)

    def unpack(x):
        return rot @ _rotvec_matrix(x[3:6]), centre + x[:3], np.abs(x[6 : 6 + n])

    def resid(x):
        r, c, s = unpack(x)
        return signed_distance(kind, (pts - c) @ r, s)

    x0 = np.concatenate([np.zeros(6), np.asarray(size, dtype=np.float64)])
    sol = least_squares(resid, x0, loss="soft_l1", f_scale=scale, x_scale="jac", max_nfev=200, method="trf")
    return unpack(sol.x)
