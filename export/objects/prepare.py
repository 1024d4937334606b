"""Per-object work (run in parallel): repair, mass properties, visual mesh, collision geometry."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import trimesh

from real2sim.export.collision.geometry import collision_geometry
from real2sim.export.collision.shape import Collision
from real2sim.export.collision.support_contact import support_hull
from real2sim.export.config import ExportCfg
from real2sim.export.objects.repair import repair_mesh
from real2sim.export.objects.visual import mean_rgba, visual_mesh
from real2sim.export.physics.inertia import MassProperties, mass_properties
from real2sim.scene import Role
from real2sim.transforms import quat_to_matrix


@dataclass(frozen=True)
class ObjectJob:
    """One object's inputs, picklable for a worker process."""

    name: str
    label: str
    mesh: trimesh.Trimesh
    density: float | None
    mass: float | None
    rgba: tuple[float, ...] | None
    cfg: ExportCfg
    threads: int = 1
    """OpenMP threads the convex decomposition may use (cores not taken by other objects' processes)."""


@dataclass(frozen=True)
class PreparedObject:
    """An object ready to write: watertight mesh, visual mesh, collision geometry, mass properties."""

    name: str
    watertight: trimesh.Trimesh
    visual: trimesh.Trimesh
    rgba: tuple[float, float, float, float]
    collision: Collision
    mass: MassProperties
    warnings: tuple[str, ...]
    seconds: tuple[tuple[str, float], ...] = ()
    """Wall time [s] of each step (repair, mass, visual, collision), for profiling; never written to files."""
    support: tuple[np.ndarray, np.ndarray] | None = None
    """Support-contact hull (vertices, faces; ``support_contact``), None for one collision piece or when off."""


def prepare_object(job: ObjectJob) -> PreparedObject:
    where = f"object {job.label!r}"
    t = [time.perf_counter()]
    rep = repair_mesh(job.mesh, where)
    t.append(time.perf_counter())
    props = mass_properties(rep.mesh, where, density=job.density, mass=job.mass)
    t.append(time.perf_counter())
    vis = visual_mesh(rep.mesh, job.cfg.visual_faces)
    t.append(time.perf_counter())
    col = collision_geometry(rep.mesh, job.cfg, job.threads)
    t.append(time.perf_counter())
    secs = tuple(zip(("repair", "mass", "visual", "collision"), np.diff(t).tolist(), strict=True))
    sup = support_hull(col, job.cfg.max_hull_vertices) if job.cfg.support_hull else None
    return PreparedObject(
        job.name, rep.mesh, vis, mean_rgba(rep.mesh, job.rgba), col, props, rep.warnings, secs, sup
    )


def lowest_z(obj: PreparedObject, world_from_object: np.ndarray) -> float:
    """Height [m] of the lowest point of the collision geometry placed by ``world_from_object``."""
    r, t = world_from_object[:3, :3], world_from_object[:3, 3]
    p = obj.collision.primitive
    if p is None:
        return float(min((v @ r.T + t)[:, 2].min() for v, _ in obj.collision.hulls))
    rp = r @ quat_to_matrix(p.quat)
    c = r @ p.pos + t
    if p.kind == "box":
        return float(c[2] - np.abs(rp[2, :]) @ p.size)
    if p.kind == "sphere":
        return float(c[2] - p.size[0])
    az = abs(rp[2, 2])
    if p.kind == "cylinder":
        return float(c[2] - az * p.size[1] - p.size[0] * np.sqrt(max(0.0, 1 - az**2)))
    return float(c[2] - az * p.size[1] - p.size[0])


@dataclass(frozen=True)
class PlacedObject:
    """A prepared object with its scene data: ``world_from_object`` (settled onto the support), role, friction."""

    obj: PreparedObject
    label: str
    role: Role
    friction: tuple[float, float, float]
    world_from_object: np.ndarray

    @property
    def name(self) -> str:
        return self.obj.name

    def visual_file(self) -> str:
        return f"{self.name}_visual.obj"

    def collision_files(self) -> list[str]:
        """Hull files; a capsule is also written as a mesh (for URDF, which has no capsule)."""
        c = self.obj.collision
        if c.primitive is None:
            return [f"{self.name}_collision_{i}.obj" for i in range(len(c.hulls))]
        return [f"{self.name}_collision_0.obj"] if c.primitive.kind == "capsule" else []

    def support_file(self) -> str | None:
        """The support-contact hull's file: dynamic objects of several pieces (``support_contact``)."""
        return f"{self.name}_support.obj" if self.role == "dynamic" and self.obj.support is not None else None
