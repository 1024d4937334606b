"""Physical values checked where they enter (scene.json, session.toml, options) and again by ``validate``.

Each check returns the value as the type the rest of real2sim uses, or raises ``ValueError`` whose message names the
value (``what``) and says what is allowed; callers turn it into an ``InputError`` naming their file. The bounds are
documented in docs/reliability.md.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

FRICTION_MAX = (10.0, 1.0, 1.0)
"""Largest sliding coefficient (no dry material pair reaches 3; 10 leaves room for adhesive grippers) and largest
torsional and rolling friction lengths [m] (MuJoCo's defaults are 0.005 and 0.0001)."""
DENSITY_MAX = 1e5
"""Largest density [kg/m^3] (osmium, the densest element, is 22,590)."""
MASS_MAX = 1e6
"""Largest object mass [kg]."""
NAME_MAX = 200
"""Longest object name (characters); names become file and model element names."""
NORMAL_TILT_MAX_DEG = 2.0
"""Largest angle [deg] between a plane support's normal and +z (the scene frame is gravity-aligned, z up)."""
RIGID_TOL = 1e-5
"""Tolerance of ``R^T R = I`` for a rotation read from a file (a float32 round trip stays well below it)."""


def number(value: Any, what: str) -> float:
    """A finite real number (not a bool, a string or null)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{what} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{what} must be finite, got {v}")
    return v


def positive(value: Any, what: str, upper: float) -> float:
    """A number in (0, upper]."""
    v = number(value, what)
    if not 0 < v <= upper:
        raise ValueError(f"{what} must be > 0 and at most {upper:g}, got {v:g}")
    return v


def friction(value: Any, what: str = "friction") -> tuple[float, float, float]:
    """MuJoCo's (sliding, torsional, rolling) friction: three finite numbers, each >= 0 and within ``FRICTION_MAX``."""
    if isinstance(value, str | bytes) or not hasattr(value, "__len__") or len(value) != 3:
        raise ValueError(f"{what} must be [sliding, torsional, rolling], got {_short(value)}")
    names = ("sliding", "torsional", "rolling")
    out = tuple(number(v, f"{what} ({n})") for v, n in zip(value, names, strict=True))
    for v, n, hi in zip(out, names, FRICTION_MAX, strict=True):
        if not 0 <= v <= hi:
            raise ValueError(f"{what} ({n}) must be >= 0 and at most {hi:g}, got {v:g}")
    return out  # type: ignore[return-value]


def rgba(value: Any, what: str = "rgba") -> tuple[float, float, float, float]:
    """Four numbers in [0, 1]."""
    if isinstance(value, str | bytes) or not hasattr(value, "__len__") or len(value) != 4:
        raise ValueError(f"{what} must be [r, g, b, a] in 0..1, got {_short(value)}")
    out = tuple(number(v, what) for v in value)
    if not all(0 <= v <= 1 for v in out):
        raise ValueError(f"{what} must be [r, g, b, a] in 0..1, got {list(out)}")
    return out  # type: ignore[return-value]


def name(value: Any, what: str = "name") -> str:
    """A non-empty string of at most ``NAME_MAX`` characters."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-empty string, got {_short(value)}")
    if len(value) > NAME_MAX:
        raise ValueError(f"{what} is {len(value)} characters long; at most {NAME_MAX} are allowed")
    return value


def rigid(value: Any, what: str, tol: float = RIGID_TOL) -> np.ndarray:
    """A 4x4 rigid, right-handed transform: finite, last row [0, 0, 0, 1], rotation orthonormal (within ``tol``)
    with det +1."""
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a 4x4 matrix of numbers") from None
    if a.shape != (4, 4) or not np.all(np.isfinite(a)):
        raise ValueError(f"{what} must be a finite 4x4 matrix, got shape {a.shape}")
    if not np.array_equal(a[3], [0.0, 0.0, 0.0, 1.0]):
        raise ValueError(f"{what} must end with the row [0, 0, 0, 1], got {a[3].tolist()}")
    r = a[:3, :3]
    with np.errstate(all="ignore"):  # 1e300 entries overflow: then err is inf and refused
        err = float(np.abs(r.T @ r - np.eye(3)).max())
    if err > tol:
        raise ValueError(f"{what} is not a rigid transform (rotation part scales or shears by {err:.3g})")
    if np.linalg.det(r) < 0:
        raise ValueError(
            f"{what} mirrors (a reflection, determinant -1); poses must be right-handed rotations"
        )
    return a


def support_normal(value: Any, what: str = "support normal") -> tuple[float, float, float]:
    """A plane support's normal: three finite numbers of unit length pointing up (+z within
    ``NORMAL_TILT_MAX_DEG``); returned as given."""
    if isinstance(value, str | bytes) or not hasattr(value, "__len__") or len(value) != 3:
        raise ValueError(f"{what} must be [x, y, z], got {_short(value)}")
    n = np.array([number(v, what) for v in value])
    with np.errstate(all="ignore"):
        norm = float(np.linalg.norm(n))
    if abs(norm - 1.0) > 1e-3:
        raise ValueError(f"{what} must be a unit vector, got {n.tolist()} (length {norm:.4g})")
    tilt = math.degrees(math.acos(max(-1.0, min(1.0, n[2] / norm))))
    if tilt > NORMAL_TILT_MAX_DEG:
        raise ValueError(
            f"{what} {n.tolist()} is {tilt:.1f} deg from +z; the scene frame is z-up with the support's normal up"
        )
    return (float(n[0]), float(n[1]), float(n[2]))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
