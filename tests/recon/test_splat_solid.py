"""Splat → solid on ground-truth shapes: a porous sphere shell of Gaussians whose bottom cap was never observed
becomes a filled ball (genus 0, the ball's volume); a torus keeps its hole (genus 1); the score counts interior
centres as covered and a bloated mesh as imprecise."""

from __future__ import annotations

import numpy as np
import trimesh

from real2sim.recon.io.splat import GaussianSplat
from real2sim.recon.splats.score import genus, score_solid
from real2sim.recon.splats.solid import blocked_directions, splat_solid_mesh


def _splat(means: np.ndarray, scale: float) -> GaussianSplat:
    n = len(means)
    q = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
    return GaussianSplat(means, np.full((n, 3), scale), q, np.full(n, 0.9), np.full((n, 3), 0.5))


def _sphere_shell(n: int = 2500, seed: int = 0, cap: float = -0.7, n_holes: int = 12) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, 3))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    v = v[v[:, 2] > cap]  # the bottom cap was never seen (a toy standing on a table)
    holes = rng.normal(size=(n_holes, 3))
    holes /= np.linalg.norm(holes, axis=1, keepdims=True)
    far = np.min(np.linalg.norm(v[:, None] - holes[None], axis=2), axis=1) > 0.15  # patchy coverage
    return v[far]


def test_porous_open_shell_becomes_a_filled_ball():
    mesh = splat_solid_mesh(_splat(_sphere_shell(cap=-0.85), 0.02), cells=96)
    ball = 4 / 3 * np.pi
    assert mesh.is_watertight and genus(mesh) == 0
    assert 0.75 * ball < mesh.volume < 1.1 * ball, mesh.volume / ball
    _, d, _ = trimesh.proximity.closest_point(mesh, _sphere_shell(seed=1))
    assert np.median(d) < 0.05  # the surface stays on the shell, not shrunk onto a core


def test_torus_keeps_its_hole():
    rng = np.random.default_rng(0)
    u, v = rng.uniform(0, 2 * np.pi, (2, 4000))
    big, small = 1.0, 0.35
    pts = np.stack(
        [(big + small * np.cos(v)) * np.cos(u), (big + small * np.cos(v)) * np.sin(u), small * np.sin(v)], 1
    )
    mesh = splat_solid_mesh(_splat(pts, 0.02), cells=96)
    assert mesh.is_watertight and genus(mesh) == 1
    solid = 2 * np.pi**2 * big * small**2
    assert 0.8 * solid < mesh.volume < 1.3 * solid, mesh.volume / solid


def test_blocked_directions_inside_a_box():
    occ = np.zeros((9, 9, 9), dtype=bool)
    occ[1:8, 1:8, 1:8] = True
    occ[2:7, 2:7, 2:7] = False  # a closed box: its inside is blocked in all 26 directions
    occ[4, 4, 7] = False  # one hole in the lid: only straight up escapes from below it
    count = blocked_directions(occ)
    assert count[4, 4, 4] == 25 and count[3, 3, 3] == 26 and count[0, 0, 0] < 26


def test_score_counts_interior_and_penalises_bloat():
    rng = np.random.default_rng(0)
    inner = rng.uniform(-0.5, 0.5, (750, 3))  # interior Gaussians, deeper than the tolerance
    v = rng.normal(size=(3000, 3))
    surf = v / np.linalg.norm(v, axis=1, keepdims=True)
    centres = np.concatenate([surf, inner])
    good = score_solid(trimesh.creation.icosphere(subdivisions=4), centres, tol_frac=0.05, samples=5000)
    assert good.coverage > 0.99 and good.on_surface < 0.85 and good.precision > 0.95 and good.genus == 0
    bloated = score_solid(
        trimesh.creation.icosphere(subdivisions=4, radius=1.3), centres, tol_frac=0.05, samples=5000
    )
    assert bloated.coverage > 0.99 and bloated.precision < 0.05
