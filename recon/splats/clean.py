"""Gaussian splats to geometry: remove transparent, oversized, floating and hidden (interior) Gaussians, turn the rest
into oriented surface samples (centre + the axis of least extent as the normal) and mesh them watertight and coloured.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import trimesh
from scipy.spatial import cKDTree
from trimesh.visual import ColorVisuals

from real2sim.errors import StageError
from real2sim.recon.io.splat import GaussianSplat
from real2sim.recon.splats.config import SplatCleanCfg


def clean_mask(splat: GaussianSplat, cfg: SplatCleanCfg = SplatCleanCfg()) -> np.ndarray:
    """Boolean mask of the Gaussians kept as surface."""
    cfg.validate()
    keep = splat.opacities >= cfg.min_opacity
    big = splat.scales.max(axis=1)
    lo, hi = np.percentile(splat.means, [1, 99], axis=0)
    extent = float(np.max(hi - lo))
    if keep.any():
        med = float(np.median(big[keep]))
        keep &= big <= cfg.max_scale_ratio * med
        keep &= big <= cfg.max_scale_extent * extent
    idx = np.flatnonzero(keep)
    if len(idx) < 20:
        raise StageError(
            f"{splat.source or 'splat'}: only {len(idx)} opaque, compact Gaussians; nothing to mesh"
        )
    pts = splat.means[idx]
    k = min(cfg.outlier_neighbors, len(idx) - 1)
    tree = cKDTree(pts)
    if k > 0:
        d, _ = tree.query(pts, k=k + 1)
        md = d[:, 1:].mean(axis=1)
        ok = md <= md.mean() + cfg.outlier_std * md.std()
        idx, pts = idx[ok], pts[ok]
        tree = cKDTree(pts)
        d, _ = tree.query(pts, k=min(k + 1, len(pts)))
        md = d[:, 1:].mean(axis=1)
    else:
        d, _ = tree.query(pts, k=2)
        md = d[:, 1]
    # Connected groups at a link length of a few typical spacings; small detached groups are floaters.
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    link = 3.0 * float(np.median(md))
    pairs = tree.query_pairs(link, output_type="ndarray")
    g = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(len(pts), len(pts)))
    _, comp = connected_components(g, directed=False)
    sizes = np.bincount(comp)
    big_comp = sizes >= cfg.min_cluster_fraction * len(pts)
    big_comp[np.argmax(sizes)] = True
    idx = idx[big_comp[comp]]
    mask = np.zeros(len(splat), dtype=bool)
    mask[idx] = True
    if cfg.drop_hidden:
        # Occlusion by every Gaussian (transparent ones attenuate too); at least the surface itself is kept.
        vis = mask & visible_mask(splat, min_transmittance=cfg.hidden_transmittance)
        if vis.sum() >= 20:
            mask = vis
    return mask


def surface_samples(splat: GaussianSplat, k_normals: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Oriented samples: Gaussian centres, normals along each Gaussian's shortest axis where it is flat (shortest
    axis < half the middle one), else the local PCA normal of the centres; oriented outward (away from the
    centroid, then made consistent with the neighbours by majority vote)."""
    pts = splat.means
    rot = splat.rotation_matrices()
    order = np.argsort(splat.scales, axis=1)
    short = order[:, 0]
    n_g = rot[np.arange(len(pts)), :, short]  # column = axis of the shortest scale
    s_sorted = np.take_along_axis(splat.scales, order, axis=1)
    flat = s_sorted[:, 0] < 0.5 * s_sorted[:, 1]
    tree = cKDTree(pts)
    k = min(k_normals, len(pts))
    _, nn = tree.query(pts, k=k)
    nb = pts[nn] - pts[nn].mean(axis=1, keepdims=True)
    cov = np.einsum("nki,nkj->nij", nb, nb)
    _, vecs = np.linalg.eigh(cov)
    n_pca = vecs[:, :, 0]
    n = np.where(flat[:, None], n_g, n_pca)
    n /= np.linalg.norm(n, axis=1, keepdims=True) + 1e-18
    c = pts.mean(axis=0)
    n *= np.where(np.einsum("ij,ij->i", n, pts - c) < 0, -1.0, 1.0)[:, None]
    for _ in range(3):  # smooth the orientation: flip where most neighbours disagree
        agree = np.einsum("nkj,nj->nk", n[nn[:, 1:]], n)
        flip = (agree < 0).mean(axis=1) > 0.5
        if not flip.any():
            break
        n[flip] *= -1
    return pts, n


def colour_mesh(mesh: trimesh.Trimesh, points: np.ndarray, colors: np.ndarray) -> trimesh.Trimesh:
    """Vertex colours from the nearest sample's RGB (0..1)."""
    _, i = cKDTree(points).query(mesh.vertices)
    rgba = np.concatenate([colors[i], np.ones((len(i), 1))], axis=1)
    assert isinstance(mesh.visual, ColorVisuals)  # a mesh made from arrays: colour visuals
    mesh.visual.vertex_colors = np.round(rgba * 255).astype(np.uint8)
    return mesh


def drop_specks(mesh: trimesh.Trimesh, min_fraction: float = 0.01) -> trimesh.Trimesh:
    """The mesh without closed parts holding less than ``min_fraction`` of its volume (marching-cubes specks);
    unchanged when it is one part or a part is open."""
    parts = mesh.split(only_watertight=False)
    if len(parts) <= 1 or not all(p.is_watertight for p in parts):
        return mesh
    vols = np.array([abs(float(p.volume)) for p in parts])
    keep = [p for p, v in zip(parts, vols, strict=True) if v >= min_fraction * vols.sum()]
    out = cast(trimesh.Trimesh, trimesh.util.concatenate(keep))  # of meshes: a mesh
    if out.volume < 0:
        out.invert()
    return out


def decimate_closed(mesh: trimesh.Trimesh, max_triangles: int, keep_volume: float = 0.97) -> trimesh.Trimesh:
    """Quadric decimation to at most ``max_triangles`` that keeps every part: the point-cloud path's decimation
    (fast quadric, repaired when collapsing a thin wall left non-manifold edges) when its result keeps
    ``keep_volume`` of the volume; otherwise the repair dropped a part (a thin ear, a tail) and Open3D's quadric
    decimation, which does not create such edges, is used instead (specks dropped)."""
    if len(mesh.faces) <= max_triangles:
        return mesh
    import open3d as o3d

    from real2sim.recon.meshing.surface import decimate, ensure_closed

    vol = abs(float(mesh.volume))
    try:
        out = ensure_closed(decimate(mesh, max_triangles))
        if len(out.faces) <= max_triangles and out.volume >= keep_volume * vol:
            return out
    except StageError:
        pass
    om = o3d.geometry.TriangleMesh(
        o3d.utility.Vector3dVector(np.asarray(mesh.vertices, dtype=np.float64)),
        o3d.utility.Vector3iVector(np.asarray(mesh.faces, dtype=np.int32)),
    )
    om = om.simplify_quadric_decimation(target_number_of_triangles=int(max_triangles))
    out = drop_specks(trimesh.Trimesh(np.asarray(om.vertices), np.asarray(om.triangles), process=True))
    if not (out.is_watertight and out.is_winding_consistent and 0 < len(out.faces) <= max_triangles):
        raise StageError(f"could not decimate the splat mesh to {max_triangles} triangles and keep it closed")
    if out.volume < 0:
        out.invert()
    return out


def visible_mask(
    splat: GaussianSplat, cells: int = 64, directions: int = 42, min_transmittance: float = 0.5
) -> np.ndarray:
    """Gaussians that can be seen from outside the splat: from each centre, rays in ``directions`` directions
    (a Fibonacci sphere) march through an opacity grid (``cells`` along the largest extent; each voxel composites
    the opacity of the Gaussians whose centre or ±1σ axis points fall in it); a Gaussian is visible when along
    some ray the transmittance past its own voxel stays >= ``min_transmittance``. Gaussians hidden behind the
    shell from every direction never reach a rendered pixel, so they carry no information about the surface."""
    means = splat.means
    rot = splat.rotation_matrices()
    lo, hi = means.min(axis=0), means.max(axis=0)
    h = float((hi - lo).max()) / cells
    lo = lo - 2 * h
    shape = np.ceil((hi - lo) / h).astype(int) + 3
    offs = [sgn * rot[:, :, a] * splat.scales[:, a : a + 1] for a in range(3) for sgn in (-1.0, 1.0)]
    pts = np.concatenate([means] + [means + o for o in offs])
    op = np.tile(np.clip(splat.opacities, 0, 0.999), 7)
    ijk = np.clip(np.floor((pts - lo) / h).astype(int), 0, shape - 1)
    flat = np.ravel_multi_index(ijk.T, shape)
    # Optical depth per voxel, -log(1 - alpha), summed over the points in it (front-to-back compositing).
    tau = np.bincount(flat, weights=-np.log1p(-op), minlength=int(np.prod(shape))).reshape(shape)
    k = np.arange(directions) + 0.5
    phi = np.arccos(1 - 2 * k / directions)
    theta = np.pi * (1 + 5**0.5) * k
    dirs = np.stack([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)], 1)
    n_steps = int(np.ceil(np.linalg.norm(shape))) + 1
    steps = np.arange(1.5, n_steps)  # in voxels, starting past the Gaussian's own voxel
    start = (means - lo) / h
    visible = np.zeros(len(means), dtype=bool)
    for d in dirs:
        todo = np.flatnonzero(~visible)
        for chunk in np.array_split(todo, max(1, len(todo) // 4000)):
            p = start[chunk, None, :] + steps[None, :, None] * d[None, None, :]
            idx = np.floor(p).astype(int)
            inside = np.all((idx >= 0) & (idx < shape), axis=2)
            idx = np.clip(idx, 0, shape - 1)
            t = np.where(inside, tau[idx[..., 0], idx[..., 1], idx[..., 2]], 0.0)
            visible[chunk] |= np.exp(-t.sum(axis=1)) >= min_transmittance
    return visible
