"""Objects placed in a scene: a world-frame object mesh enters, leaves in its own frame (footprint centre on the
support, principal x/y axes) with its pose and colours; and the ``ReconOutput`` of a scene on a level plane. Shared
by the scan route (``scene``) and the room route (``rooms.scene``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh
from scipy.spatial import cKDTree
from trimesh.visual import ColorVisuals

from real2sim.provenance import Provenance
from real2sim.rounding import round_frame
from real2sim.scene import Scene, SceneObject, Support
from real2sim.transforms import apply_transform, times_matrix


@dataclass(frozen=True, eq=False)
class ReconOutput:
    """Result of reconstruction: the scene, the 4x4 map from the input cloud's frame into the scene frame, and one
    int32 label per input point (-1 removed/background, 0 support, k >= 1 the k-th object of ``scene.objects``)."""

    scene: Scene
    world_from_input: np.ndarray
    point_labels: np.ndarray


def estimate_normals(points: np.ndarray, radius: float, origins: np.ndarray) -> np.ndarray:
    """Unit normals (Open3D hybrid search), flipped to face ``origins`` ((N, 3) or (3,))."""
    import open3d as o3d

    pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
    pc.estimate_normals(o3d.geometry.KDTreeSearchParamHybrid(radius=radius, max_nn=30))
    n = np.asarray(pc.normals).copy()
    flip = np.einsum("ij,ij->i", n, np.broadcast_to(origins, points.shape) - points) < 0
    n[flip] *= -1
    return n


def yaw_frame(xy: np.ndarray) -> np.ndarray:
    """2x2 rotation whose columns are the principal axes of ``xy`` (major first, right-handed, sign fixed), rounded
    to 12 decimals: the last bits of a BLAS/LAPACK result depend on the CPU's kernel."""
    c = np.cov((xy - xy.mean(axis=0)).T)
    w, v = np.linalg.eigh(c)
    a = v[:, np.argmax(w)]
    if a[0] < 0 or (a[0] == 0 and a[1] < 0):
        a = -a
    return round_frame([[a[0], -a[1]], [a[1], a[0]]])


def place_object(mesh_world: trimesh.Trimesh, support_z: float) -> tuple[trimesh.Trimesh, np.ndarray]:
    """Express a world-frame mesh in its own frame (footprint centre on the support, principal x/y axes)."""
    v = mesh_world.vertices
    # the vertices are moved without BLAS, so that the object's mesh is the same on every machine
    R2 = yaw_frame(v[:, :2])
    local = times_matrix(v[:, :2], R2)
    ctr = 0.5 * (local.min(axis=0) + local.max(axis=0))
    world_from_object = np.eye(4)
    world_from_object[:2, :2] = R2
    world_from_object[:2, 3] = times_matrix(ctr, R2.T)
    world_from_object[2, 3] = support_z
    obj_from_world = np.eye(4)
    obj_from_world[:3, :3] = world_from_object[:3, :3].T
    obj_from_world[:3, 3] = [-ctr[0], -ctr[1], -support_z]
    m = mesh_world.copy()
    m.vertices = apply_transform(obj_from_world, v)
    return m, world_from_object


PAINT_NEIGHBOURS = 4
"""A mesh vertex takes the mean colour of this many nearest points of its object (smooths single-point noise)."""


def paint(mesh: trimesh.Trimesh, points: np.ndarray, colors: np.ndarray | None) -> trimesh.Trimesh:
    """``mesh`` (vertices in the frame of ``points``) given per-vertex colours from its nearest coloured points;
    the geometry is untouched. As it is when the points carry no colour."""
    if colors is None or len(points) == 0:
        return mesh
    k = min(PAINT_NEIGHBOURS, len(points))
    _, idx = cKDTree(points).query(mesh.vertices, k=k)
    rgb = np.asarray(colors, dtype=np.float64)[np.asarray(idx).reshape(len(mesh.vertices), k)].mean(axis=1)
    c = np.clip(np.round(rgb * 255), 0, 255).astype(np.uint8)
    mesh.visual = ColorVisuals(mesh, vertex_colors=np.hstack([c, np.full((len(c), 1), 255, np.uint8)]))
    return mesh


def object_colour(colors: np.ndarray | None) -> tuple[float, float, float, float] | None:
    if colors is None or len(colors) == 0:
        return None
    c = np.median(colors, axis=0)
    return (round(float(c[0]), 4), round(float(c[1]), 4), round(float(c[2]), 4), 1.0)


def plane_scene(
    objects: list[SceneObject], lo: np.ndarray, hi: np.ndarray, name: str, T: np.ndarray, labels: np.ndarray
) -> ReconOutput:
    """The output of a scene on a level plane support spanning ``lo``..``hi`` (x, y) at z = 0."""
    ctr = 0.5 * (lo + hi)
    support = Support(
        "plane", (0.0, 0.0, 1.0), (float(ctr[0]), float(ctr[1]), 0.0), tuple(float(x) for x in hi - lo)
    )
    scene = Scene(
        support=support,
        objects=tuple(objects),
        world_from_input={short_name(name): T},
        provenance=Provenance(),
    )
    return ReconOutput(scene=scene, world_from_input=T, point_labels=labels)


def short_name(name: str) -> str:
    """The file name of a path (either separator)."""
    return name.replace("\\", "/").rsplit("/", 1)[-1]
