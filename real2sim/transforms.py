"""Rotations and rigid transforms, one implementation for the whole project.

Quaternions are ``wxyz`` (MuJoCo's order) wherever they cross an API; a quaternion returned here has ``w >= 0``.
Transforms are 4x4 homogeneous matrices named by their frames (``world_from_object``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def quat_to_matrix(q_wxyz: ArrayLike) -> np.ndarray:
    """(3, 3) rotation matrix of a ``wxyz`` quaternion (normalised first)."""
    from scipy.spatial.transform import Rotation

    w, x, y, z = np.asarray(q_wxyz, float)
    return Rotation.from_quat([x, y, z, w]).as_matrix()


def matrix_to_quat(r: np.ndarray) -> np.ndarray:
    """Unit ``wxyz`` quaternion (``w >= 0``) of a (3, 3) rotation matrix."""
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(np.asarray(r, float)).as_quat()
    q = np.array([w, x, y, z])
    return q if q[0] >= 0 else -q


def pose_matrix(pos: np.ndarray, q_wxyz: np.ndarray) -> np.ndarray:
    """4x4 transform of a position [m] and a ``wxyz`` orientation."""
    t = np.eye(4)
    t[:3, :3] = quat_to_matrix(q_wxyz)
    t[:3, 3] = np.asarray(pos, float)
    return t


def apply_transform(t: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``points`` (N, 3) moved by the 4x4 transform ``t``, rounded the same on every CPU.

    ``points @ R.T`` goes to BLAS, whose kernel (chosen per CPU) sums the three products in its own order, with or
    without fused multiply-adds: the last bit of every point then depends on the machine. Here each coordinate is
    ``((x r0 + y r1) + z r2) + t``, each operation rounded once.
    """
    p = np.asarray(points, dtype=np.float64)
    r, d = np.asarray(t, dtype=np.float64)[:3, :3], np.asarray(t, dtype=np.float64)[:3, 3]
    out = np.empty_like(p)
    for i in range(3):
        out[:, i] = p[:, 0] * r[i, 0] + p[:, 1] * r[i, 1] + p[:, 2] * r[i, 2] + d[i]
    return out


def times_matrix(points: ArrayLike, m: ArrayLike) -> np.ndarray:
    """``points @ m`` for (..., D) points and a (D, K) matrix or a (D,) vector, rounded the same on every CPU (no
    BLAS; see ``apply_transform``)."""
    p = np.asarray(points, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    vector = m.ndim == 1
    if vector:
        m = m[:, None]
    out = p[..., 0:1] * m[0]
    for j in range(1, m.shape[0]):
        out = out + p[..., j : j + 1] * m[j]
    return out[..., 0] if vector else out
