"""Where the robot's base stands in the scene frame, by one of three routes, each with its uncertainty:

- ``pose``: given. ``X,Y`` (or ``X,Y,YAW_DEG``) stands the base on the support at that point; ``X,Y,Z,QW,QX,QY,QZ``
  is the full pose. Exact by definition (uncertainty 0: the user's own measurement).
- ``marker``: a printed ArUco marker fixed to the base (its pose in the base frame given), seen in the capture's
  photos whose cameras are known in the scene frame (``cameras.json`` of ``recon photos``): its corners are detected
  (``recon/photos/marker.py``) and triangulated, and the marker's pose fitted to them; the uncertainty comes from
  the corner residuals.
- ``icp``: the robot's own surface at home registered into a scan of the scene by point-to-plane ICP from a coarse
  pose; the residual and the fit's covariance give the uncertainty.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from real2sim.errors import InputError, StageError
from real2sim.transforms import apply_transform
from real2sim.twin.geometry import mat_to_quat as matrix_to_quat
from real2sim.twin.geometry import pose_of as pose_matrix


@dataclass(frozen=True)
class BaseEstimate:
    """``world_from_base`` and how well it is known: standard uncertainties of position [m] and rotation [deg]."""

    world_from_base: np.ndarray
    route: str
    sigma_position: float = 0.0
    sigma_rotation_deg: float = 0.0
    detail: str = ""
    figures: dict = field(default_factory=dict)
    stand_on_support: bool = False
    """The height is still to be set: the base is stood on the support below its x, y."""

    def to_json(self) -> dict:
        t = self.world_from_base
        return {
            "route": self.route,
            "pos": [round(float(x), 9) + 0.0 for x in t[:3, 3]],
            "quat_wxyz": [round(float(x), 9) + 0.0 for x in matrix_to_quat(t[:3, :3])],
            "sigma_position_m": _num(self.sigma_position),
            "sigma_rotation_deg": _num(self.sigma_rotation_deg),
            "detail": self.detail,
            **self.figures,
        }


def _num(x: float):
    return round(float(x), 9) if math.isfinite(x) else "inf"


def yaw_matrix(yaw_deg: float) -> np.ndarray:
    a = math.radians(yaw_deg)
    r = np.eye(3)
    r[:2, :2] = [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]
    return r


def given_pose(values: tuple[float, ...], default_xy: tuple[float, float]) -> BaseEstimate:
    """The user's pose; with 0, 2 or 3 numbers the height is left to ``stand_on_support``."""
    t = np.eye(4)
    if len(values) == 7:
        t = pose_matrix(np.asarray(values[:3]), np.asarray(values[3:]))
        return BaseEstimate(t, "pose", detail="given x,y,z,qw,qx,qy,qz")
    x, y = values[:2] if values else default_xy
    t[:3, :3] = yaw_matrix(values[2] if len(values) == 3 else 0.0)
    t[:2, 3] = (x, y)
    what = "given x,y" if values else "the support's centre (no pose given)"
    return BaseEstimate(t, "pose", detail=f"{what}, stood on the support", stand_on_support=True)


def _kabsch(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The rigid 4x4 ``dst_from_src`` minimising the squared distances of matched points."""
    cs, cd = src.mean(0), dst.mean(0)
    h = (src - cs).T @ (dst - cd)
    u, _, vt = np.linalg.svd(h)
    d = np.sign(np.linalg.det(vt.T @ u.T))
    r = vt.T @ np.diag([1.0, 1.0, d]) @ u.T
    t = np.eye(4)
    t[:3, :3], t[:3, 3] = r, cd - r @ cs
    return t


def marker_corners(size: float) -> np.ndarray:
    """The marker's corners in its own frame (x right, y up, z out of the print), in OpenCV's detection order:
    top-left, top-right, bottom-right, bottom-left."""
    h = size / 2
    return np.array([[-h, h, 0.0], [h, h, 0.0], [h, -h, 0.0], [-h, -h, 0.0]])


def _cameras(path: Path) -> list[dict]:
    try:
        doc = json.loads(Path(path).read_text())
        cams = doc["cameras"]
        for c in cams:
            np.asarray(c["cam_from_world"], float).reshape(4, 4)
            _ = [float(c[k]) for k in ("fx", "fy", "cx", "cy")] + [str(c["file"])]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(path, f"not a cameras.json of real2sim recon photos ({exc})") from None
    return cams


def marker_pose(
    images: Path,
    cameras: Path,
    size: float,
    dictionary: str,
    marker_id: int,
    base_from_marker: tuple[float, ...],
) -> BaseEstimate:
    """The base's pose from its marker seen in two or more photos with known cameras."""
    import cv2

    from real2sim.recon.photos.marker import detect_marker, triangulate
    from real2sim.recon.photos.sfm import read_image

    projs, uvs, seen = [], [], []
    for c in _cameras(cameras):
        img = read_image(Path(images) / c["file"], grey=True)
        if img is None:
            continue
        corners = detect_marker(img, dictionary, marker_id)
        if corners is None:
            continue
        k = np.array([[c["fx"], 0.0, c["cx"]], [0.0, c["fy"], c["cy"]], [0.0, 0.0, 1.0]])
        dist = np.asarray(c.get("dist_coeffs_opencv") or [], float)
        uv = np.asarray(corners, float)
        if dist.size and np.any(dist):
            uv = cv2.undistortPoints(uv.reshape(-1, 1, 2), k, dist, P=k).reshape(-1, 2)
        projs.append(k @ np.asarray(c["cam_from_world"], float)[:3, :])
        uvs.append(uv + 0.5)  # OpenCV pixel centres at integers -> the cameras' (COLMAP's) at half-integers
        seen.append(c["file"])
    if len(seen) < 2:
        raise StageError(
            f"{images}: marker {dictionary} id {marker_id} found in {len(seen)} photo(s) with a camera in "
            f"{Path(cameras).name}; the marker route needs it in two or more"
        )
    world = np.array([triangulate(projs, [u[k] for u in uvs]) for k in range(4)])
    model = marker_corners(size)
    world_from_marker = _kabsch(model, world)
    resid = np.linalg.norm((world_from_marker[:3, :3] @ model.T).T + world_from_marker[:3, 3] - world, axis=1)
    rms = float(np.sqrt(np.mean(resid**2)))
    edges = np.linalg.norm(world - np.roll(world, 1, axis=0), axis=1)
    bfm = pose_matrix(np.asarray(base_from_marker[:3]), np.asarray(base_from_marker[3:]))
    t = world_from_marker @ np.linalg.inv(bfm)
    lever = float(np.linalg.norm(bfm[:3, 3]))
    sig_rot = rms / (size / 2) / math.sqrt(2)  # four corners at size/sqrt(2) from the centre: rad
    return BaseEstimate(
        t,
        "marker",
        sigma_position=float(math.hypot(rms / 2, sig_rot * lever)),
        sigma_rotation_deg=math.degrees(sig_rot),
        detail=f"marker {dictionary} id {marker_id} in {len(seen)} photos",
        figures={
            "views": seen,
            "corner_rms_m": round(rms, 9),
            "edge_lengths_m": [round(float(e), 6) for e in edges],
        },
    )


def icp_pose(
    robot_points: np.ndarray,
    scan_points: np.ndarray,
    coarse: np.ndarray,
    max_distance: float,
    voxel: float = 0.003,
) -> BaseEstimate:
    """The base's pose from the robot's surface points (base frame, at home) registered into the scan (scene frame)
    by point-to-plane ICP started at ``coarse``; ``sigma`` from the residual and the information matrix."""
    import open3d as o3d

    reg = o3d.pipelines.registration
    src = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(np.asarray(robot_points, float)))
    src = src.voxel_down_sample(voxel)
    lo, hi = _box(np.asarray(src.points), coarse, 3 * max_distance)
    scan = np.asarray(scan_points, float)
    near = scan[np.all((scan >= lo) & (scan <= hi), axis=1)]
    if len(near) < 50:
        raise StageError(
            f"the scan has {len(near)} points around the coarse base pose (within {3 * max_distance:g} m of the "
            "robot there); give a coarse pose closer to where the robot stands"
        )
    dst = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(near)).voxel_down_sample(voxel)
    dst.estimate_normals(o3d.geometry.KDTreeSearchParamHybrid(radius=4 * voxel, max_nn=30))
    crit = reg.ICPConvergenceCriteria(relative_fitness=1e-9, relative_rmse=1e-9, max_iteration=60)
    t = np.asarray(coarse, float)
    for d in (max_distance, max_distance / 2, max_distance / 4):  # coarse to fine correspondences
        res = reg.registration_icp(src, dst, d, t, reg.TransformationEstimationPointToPlane(), crit)
        t = np.asarray(res.transformation)
    final_d = max_distance / 4
    if res.fitness < 0.3:
        raise StageError(
            f"ICP matched {res.fitness:.0%} of the robot's surface to the scan (residual "
            f"{res.inlier_rmse * 1e3:.1f} mm): the robot is not where the coarse pose says, or not in the scan"
        )
    info = np.asarray(reg.get_information_matrix_from_point_clouds(src, dst, final_d, t))
    sig_rot, sig_pos = _sigmas(info, float(res.inlier_rmse))
    return BaseEstimate(
        t,
        "icp",
        sigma_position=sig_pos,
        sigma_rotation_deg=math.degrees(sig_rot),
        detail=f"ICP of the robot's surface into the scan ({len(near)} scan points near it)",
        figures={"residual_m": round(float(res.inlier_rmse), 9), "fitness": round(float(res.fitness), 6)},
    )


def _box(points: np.ndarray, t: np.ndarray, margin: float) -> tuple[np.ndarray, np.ndarray]:
    world = apply_transform(t, points)
    return world.min(0) - margin, world.max(0) + margin


def _sigmas(info: np.ndarray, rmse: float) -> tuple[float, float]:
    """(rotation [rad], position [m]) standard uncertainties: the covariance rmse² · info⁻¹ (Open3D's information
    matrix orders rotation before translation); infinite where the geometry leaves a direction free."""
    w = np.linalg.eigvalsh(info)
    if w[0] <= 1e-9 * max(w[-1], 1e-300):
        return math.inf, math.inf
    cov = rmse**2 * np.linalg.inv(info)
    rot = math.sqrt(max(np.linalg.eigvalsh(cov[:3, :3])[-1], 0.0))
    pos = math.sqrt(max(np.linalg.eigvalsh(cov[3:, 3:])[-1], 0.0))
    return rot, pos


def rotation_angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    """Angle [deg] of the rotation between two 3x3 rotations."""
    c = (np.trace(a[:3, :3].T @ b[:3, :3]) - 1) / 2
    return math.degrees(math.acos(float(np.clip(c, -1.0, 1.0))))
