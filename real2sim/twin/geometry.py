"""Geometry of a compiled model at one state: geoms as world points, the support's top under a point, and which
points lie inside the robot's links."""

from __future__ import annotations

import numpy as np

from real2sim.transforms import times_matrix


def geom_points(model, data, g: int) -> np.ndarray:
    """World points of geom ``g``: a mesh's vertices, else a 3 x 3 x 3 grid over the geom's bounding box (corners,
    edge and face centres and the centre: what lies inside, not only its outline)."""
    import mujoco

    rot = data.geom_xmat[g].reshape(3, 3)
    if int(model.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_MESH):
        m = int(model.geom_dataid[g])
        v0, nv = int(model.mesh_vertadr[m]), int(model.mesh_vertnum[m])
        local = model.mesh_vert[v0 : v0 + nv].astype(float)
    else:
        c, h = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
        signs = np.array([[sx, sy, sz] for sx in (-1, 0, 1) for sy in (-1, 0, 1) for sz in (-1, 0, 1)], float)
        local = c + signs * h
    return times_matrix(local, rot.T) + data.geom_xpos[g]


def body_geoms(model, bodies: set[int], collide_only: bool = False) -> list[int]:
    """The geoms of ``bodies`` (only those that collide with ``collide_only``)."""
    out = []
    for g in range(model.ngeom):
        if int(model.geom_bodyid[g]) not in bodies:
            continue
        if collide_only and not (model.geom_contype[g] or model.geom_conaffinity[g]):
            continue
        out.append(g)
    return out


def support_top(model, data, x: float, y: float) -> tuple[float, str] | None:
    """(z [m], geom name) of the highest surface of the world body's colliding geoms straight below ``z = 100`` at
    (x, y), or None when none is there. Objects (bodies other than the world) are not looked at."""
    import mujoco

    pnt = np.array([x, y, 100.0])
    vec = np.array([0.0, 0.0, -1.0])
    best: tuple[float, str] | None = None
    for g in body_geoms(model, {0}, collide_only=True):
        if int(model.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_MESH):
            d = mujoco.mj_rayMesh(model, data, g, pnt, vec)
        else:
            d = mujoco.mju_rayGeom(
                data.geom_xpos[g], data.geom_xmat[g], model.geom_size[g], pnt, vec, int(model.geom_type[g])
            )
        if d >= 0:
            z = 100.0 - float(d)
            if best is None or z > best[0]:
                best = (z, mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) or f"geom {g}")
    return best


def hulls_of(model, data, geoms: list[int]) -> list:
    """Convex hulls (``export.collision.fidelity.Halfspaces``) of the geoms at the current state."""
    from scipy.spatial import ConvexHull, QhullError

    from real2sim.export.collision.fidelity import Halfspaces

    out = []
    for g in geoms:
        pts = geom_points(model, data, g)
        try:
            eqs = ConvexHull(pts).equations  # rows n·x + d <= 0 inside, n unit
        except QhullError:
            continue
        out.append(Halfspaces(np.unique(eqs, axis=0), pts.min(0), pts.max(0)))
    return out


def mat_to_quat(r: np.ndarray) -> np.ndarray:
    """Unit wxyz quaternion (w >= 0) of a 3x3 rotation, by MuJoCo (already loaded: no SciPy import on this path)."""
    import mujoco

    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(r, dtype=float).reshape(9))
    return q if q[0] >= 0 else -q


def pose_of(pos, quat_wxyz) -> np.ndarray:
    """4x4 transform of a position and a wxyz quaternion (normalised first), by MuJoCo."""
    import mujoco

    q = np.asarray(quat_wxyz, float)
    m = np.zeros(9)
    mujoco.mju_quat2Mat(m, q / np.linalg.norm(q))
    t = np.eye(4)
    t[:3, :3] = m.reshape(3, 3)
    t[:3, 3] = np.asarray(pos, float)
    return t
