"""Similarity alignment (Umeyama) of camera sets or point sets, and the pose-error metrics used to judge SfM.

Conventions: ``cam_from_world`` 4x4 (OpenCV camera axes, as pycolmap); a similarity ``b_from_a`` maps
``x_b = s R x_a + t`` and is stored as the 4x4 ``[[s R, t], [0, 1]]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Similarity:
    """``x_b = scale * rotation @ x_a + translation``."""

    scale: float
    rotation: np.ndarray
    translation: np.ndarray

    def matrix(self) -> np.ndarray:
        m = np.eye(4)
        m[:3, :3] = self.scale * self.rotation
        m[:3, 3] = self.translation
        return m

    def apply(self, points: np.ndarray) -> np.ndarray:
        return self.scale * np.asarray(points, dtype=float) @ self.rotation.T + self.translation

    def apply_to_cam_from_world(self, cam_from_a: np.ndarray) -> np.ndarray:
        """Express a camera pose given in frame ``a`` in frame ``b`` (the result is again a rigid 4x4)."""
        r = cam_from_a[:3, :3] @ self.rotation.T
        centre_b = self.apply(camera_centre(cam_from_a)[None])[0]
        out = np.eye(4)
        out[:3, :3] = r
        out[:3, 3] = -r @ centre_b
        return out


def umeyama(src: np.ndarray, dst: np.ndarray, with_scale: bool = True) -> Similarity:
    """Least-squares similarity with ``dst ≈ s R src + t`` (Umeyama 1991). ``src``, ``dst``: (N, 3), N >= 3."""
    src = np.asarray(src, dtype=float)
    dst = np.asarray(dst, dtype=float)
    if src.shape != dst.shape or src.ndim != 2 or src.shape[1] != 3 or len(src) < 3:
        raise ValueError(f"umeyama needs two (N, 3) arrays with N >= 3, got {src.shape} and {dst.shape}")
    mu_s, mu_d = src.mean(0), dst.mean(0)
    xs, xd = src - mu_s, dst - mu_d
    cov = xd.T @ xs / len(src)
    u, d, vt = np.linalg.svd(cov)
    sign = np.eye(3)
    if np.linalg.det(u) * np.linalg.det(vt) < 0:
        sign[2, 2] = -1.0
    rot = u @ sign @ vt
    var_s = (xs**2).sum() / len(src)
    scale = float(np.trace(np.diag(d) @ sign) / var_s) if with_scale else 1.0
    return Similarity(scale, rot, mu_d - scale * rot @ mu_s)


def camera_centre(cam_from_world: np.ndarray) -> np.ndarray:
    """Camera centre in world coordinates [same unit as the translation]."""
    r, t = cam_from_world[:3, :3], cam_from_world[:3, 3]
    return -r.T @ t


def rotation_angle_deg(r: np.ndarray) -> float:
    """Angle [deg] of a rotation matrix."""
    c = np.clip((np.trace(r) - 1.0) / 2.0, -1.0, 1.0)
    return float(np.degrees(np.arccos(c)))


@dataclass(frozen=True)
class PoseErrors:
    """Per-camera errors after aligning the estimate to the reference with a similarity on camera centres."""

    names: tuple[str, ...]
    rotation_deg: np.ndarray
    centre_error: np.ndarray
    """Centre error in reference units."""
    ring_radius: float
    """Mean distance of the reference centres from their centroid (reference units)."""
    shared_offset_deg: float
    """Angle of the mean residual rotation ``R_est R_ref^T`` expressed in the camera frame (an offset every camera
    shares, e.g. from a wrong principal point)."""
    alignment: Similarity

    @property
    def median_rotation_deg(self) -> float:
        return float(np.median(self.rotation_deg))

    @property
    def median_centre_rel(self) -> float:
        return float(np.median(self.centre_error) / self.ring_radius)

    def summary(self) -> dict[str, float]:
        return {
            "n": len(self.names),
            "median_rotation_deg": self.median_rotation_deg,
            "max_rotation_deg": float(np.max(self.rotation_deg)),
            "median_centre_error_rel_radius": self.median_centre_rel,
            "shared_offset_deg": self.shared_offset_deg,
        }


def pose_errors(est: dict[str, np.ndarray], ref: dict[str, np.ndarray]) -> PoseErrors:
    """Compare ``cam_from_world`` poses by name (only names in both). Needs at least 3 common cameras."""
    names = tuple(sorted(set(est) & set(ref)))
    if len(names) < 3:
        raise ValueError(f"need >= 3 cameras in common to align, got {len(names)}")
    c_est = np.array([camera_centre(est[n]) for n in names])
    c_ref = np.array([camera_centre(ref[n]) for n in names])
    sim = umeyama(c_est, c_ref)
    rot_err, cen_err, resid = [], [], []
    for n, ce, cr in zip(names, sim.apply(c_est), c_ref, strict=True):
        aligned = sim.apply_to_cam_from_world(est[n])
        d = aligned[:3, :3] @ ref[n][:3, :3].T  # residual in the camera frame
        rot_err.append(rotation_angle_deg(d))
        cen_err.append(float(np.linalg.norm(ce - cr)))
        resid.append(d)
    u, _, vt = np.linalg.svd(np.mean(resid, axis=0))
    mean_r = u @ np.diag([1, 1, np.linalg.det(u @ vt)]) @ vt
    radius = float(np.mean(np.linalg.norm(c_ref - c_ref.mean(0), axis=1)))
    return PoseErrors(names, np.array(rot_err), np.array(cen_err), radius, rotation_angle_deg(mean_r), sim)


def orbit_warning(cams: dict[str, np.ndarray], known_intrinsics: bool) -> str | None:
    """Warn when all relative rotations share one axis (orbit / turntable) and intrinsics were self-calibrated."""
    if known_intrinsics or len(cams) < 4:
        return None
    rots = [c[:3, :3] for c in cams.values()]
    axes = []
    for r in rots[1:]:
        rel = r.T @ rots[0]  # world-frame relative rotation
        w = np.array([rel[2, 1] - rel[1, 2], rel[0, 2] - rel[2, 0], rel[1, 0] - rel[0, 1]])
        if np.linalg.norm(w) > 0.05:
            axes.append(w / np.linalg.norm(w))
    if len(axes) < 3:
        return None
    a = np.array(axes)
    a *= np.sign(a @ a[0])[:, None]
    spread = np.degrees(np.arccos(np.clip(np.abs(a @ a.mean(0) / np.linalg.norm(a.mean(0))), -1, 1))).max()
    if spread < 5.0:
        return (
            "camera path is an orbit about one axis (a critical motion for self-calibration): the principal point "
            "is not observable and every camera may carry the same small orientation offset; pass known "
            "intrinsics (--intrinsics) for accurate orientations"
        )
    return None
