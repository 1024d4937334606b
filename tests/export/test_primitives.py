"""Primitive fits: the right kind, and sized to be as close as possible to a faceted mesh of it (minimax)."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from real2sim.export.collision.primitives import fit_primitive


@pytest.mark.parametrize("sections", [24, 63])
def test_faceted_cylinder_gets_the_minimax_radius(sections: int) -> None:
    r, height = 0.04, 0.1
    m = trimesh.creation.cylinder(radius=r, height=height, sections=sections)
    m.apply_transform(trimesh.transformations.rotation_matrix(0.3, [1.0, 0.2, 0.0]))
    p = fit_primitive(m, 0.01)
    assert p is not None and p.kind == "cylinder"
    apothem = r * np.cos(np.pi / sections)
    assert apothem < p.size[0] < r
    assert abs(p.size[1] - height / 2) < 1e-6
    # the worst surface distance is about half the facets' sagitta (an OBB-sized radius gives the whole of it)
    diag = float(np.linalg.norm(trimesh.bounds.oriented_bounds(m)[1]))
    assert p.error * diag <= 0.6 * (r - apothem)


def test_faceted_sphere_and_box() -> None:
    s = trimesh.creation.icosphere(subdivisions=2, radius=0.05)
    p = fit_primitive(s, 0.02)
    assert p is not None and p.kind == "sphere"
    d = np.linalg.norm(s.vertices, axis=1)
    assert d.min() < 0.05 and abs(p.size[0] - 0.05) < 0.5 * (
        0.05 - np.min(np.linalg.norm(s.triangles_center, axis=1))
    )
    b = trimesh.creation.box((0.1, 0.06, 0.03))
    p = fit_primitive(b, 0.01)
    assert p is not None and p.kind == "box" and p.error < 1e-9
    np.testing.assert_allclose(np.sort(p.size), [0.015, 0.03, 0.05], atol=1e-9)
