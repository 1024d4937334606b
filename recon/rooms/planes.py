"""Room scans: which large plane is the floor, which are walls, and whether a scan shows a room at all.

A room is recognised from geometry alone, in any frame: the large planes of a coarse grid are found by RANSAC; the
floor is a *bounding* plane (almost no point lies behind it as seen from the sensor) whose normal is near the
sensor's vertical axis (the narrower angular spread of its rays, as a depth camera's frame is wider than tall) or
the given up direction; walls are large planes perpendicular to it that rise well above it. The scene frame and
the objects are built in ``rooms/scene.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from real2sim.recon.pointcloud.support import fit_plane_lsq, ransac_planes, voxel_downsample
from real2sim.transforms import times_matrix

ROOM_VOXEL = 0.04
"""Grid [m] of the plane search (room scale: depth noise of a few cm at 5 m)."""
ROOM_PLANE_DISTANCE = 0.05
"""RANSAC inlier distance [m] of room planes (a Kinect's depth steps are ~7 cm apart at 5 m)."""
SURFACE_DEPTH = 0.3
"""Planes within 10 deg and closer than this [m] are one surface (a wall split into depth steps, a door in its
frame)."""
ROOM_PLANES = 8
"""How many planes the search extracts, largest first."""
RANSAC_SAMPLE = 8000
"""Each plane is hypothesised on at most this many grid points (cost), its inliers counted on all."""
MIN_PLANE_FRACTION = 0.02
"""A plane must hold this share of the coarse grid's points to count as a floor or wall candidate."""
MIN_ROOM_EXTENT = 2.0
"""A scan whose bounding diagonal is below this [m] is never a room (a tabletop crop)."""
BOUNDING_BEHIND = 0.05
"""A floor has at most this share of the points behind it (beyond twice the inlier distance)."""
VERTICAL_COS = float(np.cos(np.radians(50)))
"""The floor's normal is within 50 deg of the up direction (or of the sensor's vertical axis, either sign)."""
PERPENDICULAR_SIN = float(np.sin(np.radians(15)))
"""A wall's normal is within 15 deg of horizontal."""
WALL_HEIGHT = 1.2
"""A wall rises at least this far [m] above the floor."""
MIN_SENSOR_HEIGHT = 0.5
"""The sensor is at least this far [m] above a room's floor."""


@dataclass(frozen=True, eq=False)
class Plane:
    """A plane ``normal . x + offset = 0`` with the unit ``normal`` toward the free side; ``count``: coarse inliers."""

    normal: np.ndarray
    offset: float
    count: int

    def distance(self, x: np.ndarray) -> np.ndarray:
        return times_matrix(x, self.normal) + self.offset


@dataclass(frozen=True, eq=False)
class RoomFit:
    """The floor (refined on every point near it) and the walls of a room scan, in the input frame."""

    floor: Plane
    walls: tuple[Plane, ...]


def room_planes(points: np.ndarray, viewpoint: np.ndarray, seed: int) -> tuple[np.ndarray, list[Plane]]:
    """The coarse grid and its large planes, normals toward ``viewpoint``; parallel planes a depth step apart
    (one surface split by depth quantisation) are merged."""
    ds, _ = voxel_downsample(points, ROOM_VOXEL)
    found = _sampled_ransac_planes(ds, seed)
    planes: list[Plane] = []
    for model, inl in found:
        if len(inl) < max(MIN_PLANE_FRACTION * len(ds), 50):
            continue
        k = float(np.linalg.norm(model[:3]))
        n, d = model[:3] / k, float(model[3]) / k
        if np.dot(n, viewpoint) + d < 0:
            n, d = -n, -d
        for i, p in enumerate(planes):
            if np.dot(p.normal, n) > np.cos(np.radians(10)) and abs(p.offset - d) < SURFACE_DEPTH:
                k = p.count + len(inl)
                m = p.normal * p.count + n * len(inl)
                planes[i] = Plane(m / np.linalg.norm(m), (p.offset * p.count + d * len(inl)) / k, k)
                break
        else:
            planes.append(Plane(n, d, len(inl)))
    return ds, planes


def _sampled_ransac_planes(ds: np.ndarray, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``ROOM_PLANES`` planes, largest first: each hypothesised by RANSAC on at most ``RANSAC_SAMPLE`` of the
    remaining points, its inliers taken from all of them."""
    rng = np.random.default_rng(seed)
    remaining = np.arange(len(ds))
    out = []
    for _ in range(ROOM_PLANES):
        if len(remaining) < 50:
            break
        sub = (
            remaining
            if len(remaining) <= RANSAC_SAMPLE
            else np.sort(rng.choice(remaining, RANSAC_SAMPLE, False))
        )
        model = ransac_planes(ds[sub], ROOM_PLANE_DISTANCE, 1, seed)
        if not model:
            break
        m = model[0][0]
        inl = remaining[np.abs(ds[remaining] @ m[:3] + m[3]) < ROOM_PLANE_DISTANCE * np.linalg.norm(m[:3])]
        if len(inl) < 3:
            break
        out.append((m, inl))
        remaining = np.setdiff1d(remaining, inl, assume_unique=True)
    return out


def sensor_vertical(points: np.ndarray, sensor: np.ndarray) -> np.ndarray | None:
    """The sensor's vertical axis (sign unknown): across its rays, the direction of narrower angular spread."""
    rays = points - sensor
    rays = rays / np.linalg.norm(rays, axis=1, keepdims=True)
    axis = np.median(rays, axis=0)
    axis /= np.linalg.norm(axis)
    tangent = rays - np.outer(rays @ axis, axis)
    w, v = np.linalg.eigh(np.cov(tangent.T))
    lo, mid = w[0], w[1]  # w[0] ~ 0: the optical axis itself
    spread_a = np.ptp(np.percentile(tangent @ v[:, 1], [1, 99]))
    spread_b = np.ptp(np.percentile(tangent @ v[:, 2], [1, 99]))
    if lo > 0.5 * mid or abs(spread_a - spread_b) < 0.1 * max(spread_a, spread_b):
        return None  # not one camera's frustum (a panorama, a merged scan) or a square one
    return v[:, 1] if spread_a < spread_b else v[:, 2]


def refine_plane(points: np.ndarray, plane: Plane, band: float) -> Plane:
    """Least-squares refit on every point near the plane (two passes, shrinking band), orientation kept."""
    n, d = plane.normal, plane.offset
    for b in (band, 0.6 * band):
        near = np.abs(points @ n + d) < b
        if near.sum() < 3:
            break
        m, c = fit_plane_lsq(points[near])
        m = m if np.dot(m, n) > 0 else -m
        n, d = m, -float(np.dot(m, c))
    return Plane(n, d, plane.count)


def detect_room(
    points: np.ndarray, sensor: np.ndarray | None, up: np.ndarray | None, seed: int
) -> tuple[RoomFit | None, str]:
    """The floor and walls when ``points`` (input frame) show a room, else ``(None, why not)``."""
    lo, hi = np.percentile(points, [1, 99], axis=0)
    if float(np.linalg.norm(hi - lo)) < MIN_ROOM_EXTENT:
        return None, f"the scan spans less than {MIN_ROOM_EXTENT:g} m"
    if up is None and sensor is None:  # before the plane search: nothing could orient a floor
        return None, "no up direction and no sensor position"
    view = np.asarray(sensor, dtype=np.float64) if sensor is not None else points.mean(axis=0)
    ds, planes = room_planes(points, view, seed)
    if up is not None:
        axis, signed = np.asarray(up, dtype=np.float64) / np.linalg.norm(up), True
    else:
        axis, signed = sensor_vertical(ds, view), False
        if axis is None:
            return None, "no up direction (the sensor's frame is not one camera's view)"
    floors = []
    for p in planes:
        c = float(np.dot(p.normal, axis))
        behind = float(np.mean(p.distance(ds) < -2 * ROOM_PLANE_DISTANCE))
        if (c if signed else abs(c)) >= VERTICAL_COS and behind <= BOUNDING_BEHIND:
            floors.append(p)
    if not floors:
        return None, "no large bounding plane below the sensor"
    floor = refine_plane(points, max(floors, key=lambda p: p.count), ROOM_PLANE_DISTANCE)
    if floor.distance(view) < MIN_SENSOR_HEIGHT:
        return None, f"the sensor is less than {MIN_SENSOR_HEIGHT:g} m above the lowest plane"
    height = floor.distance(ds)
    walls = []
    for p in planes:
        if abs(float(np.dot(p.normal, floor.normal))) > PERPENDICULAR_SIN:
            continue
        h = height[np.abs(p.distance(ds)) < ROOM_PLANE_DISTANCE]
        if len(h) and np.percentile(h, 98) >= WALL_HEIGHT:
            walls.append(p)
    if not walls:
        return None, f"no wall: no large plane perpendicular to the floor rises {WALL_HEIGHT:g} m above it"
    return RoomFit(floor, tuple(walls)), ""
