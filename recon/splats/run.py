"""``real2sim recon splat``: a trained 3D Gaussian splat (PLY) to a ``Scene``.

Gaussians are read and activated (``io.splat``), cleaned and turned into oriented surface samples (``splat``),
scaled to metres, then either meshed alone (``object_only``: one object, no support in view) or handed to the
point-cloud path (``points_to_scene``: support plane, segmentation, per-object meshing).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from real2sim.errors import StageError
from real2sim.outguard import check_output
from real2sim.provenance import Provenance
from real2sim.recon.io.splat import GaussianSplat, read_splat
from real2sim.recon.splats.clean import (
    clean_mask,
    colour_mesh,
    decimate_closed,
    surface_samples,
)
from real2sim.recon.splats.config import SplatReconCfg
from real2sim.recon.splats.solid import splat_solid_mesh
from real2sim.rounding import round_frame
from real2sim.scene import Scene, SceneObject, Support, save_scene
from real2sim.transforms import apply_transform

if TYPE_CHECKING:
    import trimesh

log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class SplatReconOutput:
    """The scene, the map from splat units/frame to the scene frame, and which Gaussians were kept."""

    scene: Scene
    world_from_splat: np.ndarray
    kept: np.ndarray
    splat: GaussianSplat
    solid: bool = False
    """Meshed as one solid object (``object_only``, or the scene route found no support or no object)."""


def rest_pose(mesh: trimesh.Trimesh, keep_within_deg: float = 15.0) -> np.ndarray:
    """Rigid 4x4 that sets a single object (no support in view, so gravity unknown) down in a stable resting pose
    on z = 0, centred in x/y: the input orientation when one of the mesh's stable poses keeps +z within
    ``keep_within_deg`` (the least rotation of those), else the most probable stable pose (``trimesh.poses``:
    quasi-static drops from random orientations). A splat's own frame is often not gravity-aligned, and an object
    set down on a point of its surface that is not a stable face rolls away in simulation."""
    import trimesh

    poses, prob = trimesh.poses.compute_stable_poses(mesh, n_samples=1)
    if len(poses) == 0:
        return np.eye(4)
    ups = np.array([np.linalg.inv(t[:3, :3])[:, 2] for t in poses])  # the pose's up axis in the input frame
    tilt = np.degrees(np.arccos(np.clip(ups[:, 2], -1, 1)))
    ok = np.flatnonzero(tilt <= keep_within_deg)
    k = int(ok[np.argmin(tilt[ok])]) if len(ok) else int(np.argmax(prob))
    t = round_frame(poses[k])
    v = apply_transform(t, mesh.vertices)
    lo, hi = v.min(axis=0), v.max(axis=0)
    t[:3, 3] -= [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), lo[2]]
    return t


def splat_to_scene(splat: GaussianSplat, cfg: SplatReconCfg) -> SplatReconOutput:
    """Clean and mesh an activated splat: a segmented scene on its support, or (``object_only``, or when the
    scene route finds no support or no object) one solid object."""
    cfg.validate()
    if not cfg.object_only:
        try:
            return _segmented_scene(splat, cfg)
        except StageError as exc:
            log.warning("%s; meshing the splat as one solid object", exc)
    return _solid_object(splat, cfg)


def _solid_object(splat: GaussianSplat, cfg: SplatReconCfg) -> SplatReconOutput:
    """One solid object set down at rest on z = 0; the hidden (interior) Gaussians are kept: they lie inside it."""
    scale = 1.0 if cfg.scale is None else float(cfg.scale)
    kept = clean_mask(splat, replace(cfg.clean, drop_hidden=False))
    sub = splat.subset(kept)
    name = Path(splat.source).name or "splat"
    pts = sub.means * scale
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    shift = np.array([-0.5 * (lo[0] + hi[0]), -0.5 * (lo[1] + hi[1]), -lo[2]])
    w = pts + shift
    solid = GaussianSplat(w, sub.scales * scale, sub.rotations, sub.opacities, sub.colors, splat.source)
    mesh = splat_solid_mesh(solid, cells=cfg.object_cells)
    mesh = decimate_closed(mesh, cfg.max_triangles)
    mesh = colour_mesh(mesh, w, sub.colors)
    rest = rest_pose(mesh)
    mesh.vertices = apply_transform(rest, mesh.vertices)  # not BLAS: the same mesh on every CPU
    rgb = np.median(sub.colors, axis=0)
    obj = SceneObject(
        name="object_1", mesh=mesh, density=cfg.density,
        rgba=(round(float(rgb[0]), 4), round(float(rgb[1]), 4), round(float(rgb[2]), 4), 1.0),
        source=f"{name}#object",
    )  # fmt: skip
    world_from_splat = np.eye(4)
    world_from_splat[:3, :3] *= scale
    world_from_splat[:3, 3] = shift
    world_from_splat = round_frame(rest @ world_from_splat)
    scene = Scene(Support("plane", (0.0, 0.0, 1.0), (0.0, 0.0, 0.0)), (obj,), {name: world_from_splat})
    return SplatReconOutput(scene, world_from_splat, kept, splat, solid=True)


def _segmented_scene(splat: GaussianSplat, cfg: SplatReconCfg) -> SplatReconOutput:
    """Oriented surface samples of the visible Gaussians through the point-cloud path (support, segmentation)."""
    from real2sim.recon.io import PointCloud
    from real2sim.recon.pointcloud.config import PointCloudReconCfg
    from real2sim.recon.pointcloud.scene import points_to_scene

    scale = 1.0 if cfg.scale is None else float(cfg.scale)
    kept = clean_mask(splat, cfg.clean)
    sub = splat.subset(kept)
    pts, nrm = surface_samples(sub)
    name = Path(splat.source).name or "splat"
    pc_cfg = replace(PointCloudReconCfg(), mesh_max_cells=cfg.mesh_max_cells, max_triangles=cfg.max_triangles,
                     density=cfg.density).validate()  # fmt: skip
    out = points_to_scene(
        PointCloud(pts * scale, colors=sub.colors, normals=nrm, source=name), pc_cfg, input_name=name
    )
    if not out.scene.objects:
        raise StageError(f"{name}: no object found on the support")
    s = np.eye(4)
    s[:3, :3] *= scale
    world_from_splat = round_frame(out.world_from_input @ s)
    scene = replace(out.scene, world_from_input={name: world_from_splat})
    return SplatReconOutput(scene, world_from_splat, kept, splat, solid=False)


def run_recon_splat(cfg: SplatReconCfg) -> SplatReconOutput:
    """Read the splat, build the scene and (with ``out_dir``) write the scene folder atomically."""
    cfg.validate()
    if cfg.out_dir is not None:
        check_output(cfg.out_dir, [cfg.input], overwrite=cfg.overwrite)
    splat = read_splat(cfg.input)
    out = splat_to_scene(splat, cfg)
    opts = {
        "scale": cfg.scale,
        "object_only": cfg.object_only,
        "solid_object": out.solid,
        "min_opacity": cfg.clean.min_opacity,
        "mesh_max_cells": cfg.mesh_max_cells,
        "object_cells": cfg.object_cells,
        "kept_gaussians": int(out.kept.sum()),
        "gaussians": len(splat),
    }
    steps = ("read splat", "activate", "remove transparent/oversized/floating Gaussians", "surface samples",
             "mesh solid object" if out.solid else "segment + mesh")  # fmt: skip
    scene = replace(out.scene, provenance=Provenance.for_inputs([cfg.input], steps, opts))
    if cfg.out_dir is not None:
        save_scene(scene, cfg.out_dir, overwrite=cfg.overwrite, inputs=[cfg.input])
    return replace(out, scene=scene)
