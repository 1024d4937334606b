"""A splat as a solid object: the Gaussians mark a voxel shell, the space the shell encloses (seen blocked along
almost every direction, so holes in an under-observed shell do not let the outside in) is filled, and the outer
surface of that solid is meshed watertight. A trained splat covers an object's surface with a layer of Gaussians
that is often porous (few Gaussians where the capture saw little) and hollow inside; meshing the layer alone gives
a thin, perforated shell (high genus, a fraction of the object's volume and so of its mass)."""

from __future__ import annotations

import itertools
from typing import cast

import numpy as np
import trimesh

from real2sim.errors import StageError
from real2sim.recon.io.splat import GaussianSplat


def _or_shifted(a: np.ndarray, d: tuple[int, ...], k: int) -> np.ndarray:
    """``a[x] | a[x + k d]`` (beyond the grid: False)."""
    out = a.copy()
    if any(k * abs(di) >= n for n, di in zip(a.shape, d, strict=True)):
        return out
    src = tuple(slice(max(k * di, 0), n + min(k * di, 0)) for n, di in zip(a.shape, d, strict=True))
    dst = tuple(slice(max(-k * di, 0), n + min(-k * di, 0)) for n, di in zip(a.shape, d, strict=True))
    out[dst] |= a[src]
    return out


def blocked_directions(occ: np.ndarray) -> np.ndarray:
    """Per voxel, in how many of the 26 lattice directions a ray from it meets an occupied voxel before leaving
    the grid (doubling shifts: log2(size) steps per direction)."""
    count = np.zeros(occ.shape, dtype=np.uint8)
    n = max(occ.shape)
    for d in itertools.product((-1, 0, 1), repeat=3):
        if d == (0, 0, 0):
            continue
        hit, k = occ, 1
        while k < n:
            hit = _or_shifted(hit, d, k)
            k *= 2
        count += hit
    return count


def fill_cavities(occ: np.ndarray) -> np.ndarray:
    """``occ`` with every free region that does not touch the grid's border filled."""
    from scipy import ndimage

    lab, _ = cast("tuple[np.ndarray, int]", ndimage.label(~occ))
    faces = [lab[[0, -1]].ravel(), lab[:, [0, -1]].ravel(), lab[:, :, [0, -1]].ravel()]
    border = np.unique(np.concatenate(faces))
    return ~np.isin(lab, border[border > 0])


def splat_solid_mesh(
    splat: GaussianSplat,
    cells: int = 160,
    close_frac: float = 0.025,
    sigmas: float = 1.0,
    min_dirs: int = 22,
    passes: int = 3,
) -> trimesh.Trimesh:
    """Watertight mesh of the solid the Gaussians bound: each Gaussian marks voxels at its centre and at
    ``± sigmas`` standard deviations along its three axes; the marks are dilated by a ball of ``close_frac`` of the
    largest extent (gaps between sparse Gaussians close); free voxels blocked along at least ``min_dirs`` of the 26
    lattice directions are filled (``passes`` times: the filled core then blocks too), so a hole in the shell
    leaves a dent, not a tunnel into a hollow; cavities are filled, the dilation is undone by the same ball (the
    surface returns onto the Gaussians), the largest part is kept, lightly smoothed and contoured (marching cubes
    at 0.5)."""
    from scipy import ndimage

    from real2sim.recon.meshing.surface import ensure_closed, marching_cubes
    from real2sim.recon.splats.clean import drop_specks

    rot = splat.rotation_matrices()
    offs = [sgn * sigmas * rot[:, :, a] * splat.scales[:, a : a + 1] for a in range(3) for sgn in (-1.0, 1.0)]
    pts = np.concatenate([splat.means] + [splat.means + o for o in offs])
    lo, hi = splat.means.min(axis=0), splat.means.max(axis=0)
    h = float((hi - lo).max()) / cells
    close = max(1, int(round(close_frac * cells)))
    pad = close + 3
    lo = lo - pad * h
    shape = np.ceil((hi - lo) / h).astype(int) + pad + 1
    ijk = np.clip(np.floor((pts - lo) / h).astype(int), 0, shape - 1)
    occ = np.zeros(shape, dtype=bool)
    occ[tuple(ijk.T)] = True
    reach = np.sqrt(close * close + 0.5)  # the voxel ball of radius ``close``, as a distance
    # Dilation; the marks stay ``pad`` voxels off the grid's border, so the erosion below sees no border.
    occ = ndimage.distance_transform_edt(~occ) <= reach
    for _ in range(passes):  # the filled core blocks rays too: channels between it and the shell fill next
        occ = occ | (blocked_directions(occ) >= min_dirs)
    occ = fill_cavities(occ)
    occ = ndimage.distance_transform_edt(occ) > reach  # erosion: the dilation undone
    lab, _ = cast("tuple[np.ndarray, int]", ndimage.label(occ))
    sizes = np.bincount(lab.ravel())
    sizes[0] = 0
    occ = lab == int(np.argmax(sizes))
    vol = ndimage.gaussian_filter(occ.astype(np.float64), 1.0)
    v, f = marching_cubes(0.5 - vol)  # negative inside
    if len(f) == 0:
        raise StageError("splat meshing produced no surface")
    mesh = trimesh.Trimesh(lo + (v + 0.5) * h, f, process=True)
    if mesh.volume < 0:
        mesh.invert()
    return ensure_closed(drop_specks(mesh))
