"""Splat meshing helpers on synthetic meshes: decimation keeps every closed part (a thin ear or tail that marching
cubes cut off the body must survive), specks below 1 % of the volume go."""

from __future__ import annotations

import numpy as np
import trimesh

from real2sim.recon.splats.clean import decimate_closed, drop_specks


def _parts() -> trimesh.Trimesh:
    body = trimesh.creation.icosphere(subdivisions=5, radius=1.0)  # 20480 faces
    ear = trimesh.creation.icosphere(subdivisions=4, radius=0.35)  # ~4 % of the body's volume
    ear.apply_translation([1.6, 0.0, 0.0])
    speck = trimesh.creation.icosphere(subdivisions=2, radius=0.05)  # ~0.01 %
    speck.apply_translation([0.0, 1.3, 0.0])
    return trimesh.util.concatenate([body, ear, speck])


def test_drop_specks_keeps_parts_above_one_percent():
    m = _parts()
    out = drop_specks(m)
    assert len(out.split(only_watertight=False)) == 2
    assert out.is_watertight and out.volume > 0
    assert abs(out.volume - m.volume) < 0.001 * m.volume


def test_decimate_closed_keeps_every_part_within_budget():
    m = drop_specks(_parts())
    out = decimate_closed(m, 4000)
    assert len(out.faces) <= 4000
    assert out.is_watertight and out.is_winding_consistent
    assert len(out.split(only_watertight=False)) == 2  # the ear is still there
    assert abs(out.volume - m.volume) < 0.03 * m.volume
    _, d, _ = trimesh.proximity.closest_point(out, m.vertices[::17])
    assert np.max(d) < 0.02  # a 1 m sphere's surface stays within 2 cm
    assert decimate_closed(out, 10000) is out  # within budget: unchanged
