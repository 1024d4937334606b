"""Fewest pieces at the fidelity: scanned boxes and cans become primitives, a nearly convex object one hull, and a
budget tighter than the surface check writes a package with a warning (``strict`` refuses)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import trimesh

from real2sim.export.collision.primitives import fit_primitive


def scanned(m: trimesh.Trimesh, noise: float, seed: int = 0) -> trimesh.Trimesh:
    """``m`` as a scan sees it: finely remeshed, each vertex moved along its normal by Gaussian noise [m], and a
    Poisson-like bulge closing the underside."""
    v, f = trimesh.remesh.subdivide_to_size(m.vertices, m.faces, max_edge=0.004)
    s = trimesh.Trimesh(v, f)
    rng = np.random.default_rng(seed)
    n = s.vertex_normals
    v = s.vertices + n * rng.normal(0.0, noise, (len(v), 1))
    low = s.vertices[:, 2] < s.bounds[0][2] + 1e-9
    v[low, 2] -= 0.004 * np.exp(-np.sum(s.vertices[low, :2] ** 2, axis=1) / 0.02**2)
    return trimesh.Trimesh(v, s.faces)


@pytest.mark.parametrize("kind", ["box", "cylinder"])
def test_scanned_box_and_can_are_primitives(kind: str) -> None:
    if kind == "box":
        m = trimesh.creation.box((0.05, 0.07, 0.12))
    else:
        m = trimesh.creation.cylinder(0.035, 0.11, sections=96)
    m.apply_translation([0, 0, -m.bounds[0][2]])
    s = scanned(m, 0.0008)
    p = fit_primitive(s, 0.02)
    assert p is not None and p.kind == kind
    want = [0.025, 0.035, 0.06] if kind == "box" else [0.035, 0.055]
    np.testing.assert_allclose(np.sort(p.size) if kind == "box" else p.size, want, atol=1.5e-3)


def test_scanned_mug_is_not_a_primitive() -> None:
    outer = trimesh.creation.cylinder(0.04, 0.1, sections=64)
    inner = trimesh.creation.cylinder(0.034, 0.1, sections=64)
    inner.apply_translation([0, 0, 0.01])
    mug = trimesh.boolean.difference([outer, inner], engine="manifold")
    assert fit_primitive(mug, 0.02) is None


def test_nearly_convex_object_is_one_hull(tmp_path) -> None:
    from real2sim.export.collision.geometry import collision_geometry
    from real2sim.export.config import ExportCfg

    egg = trimesh.creation.icosphere(4, 0.05)
    egg.apply_scale([1.0, 0.7, 0.5])
    egg.vertices[:, 0] += (
        0.3 * np.maximum(egg.vertices[:, 0], 0) ** 2 / 0.05
    )  # not an ellipsoid: no primitive
    c = collision_geometry(egg, ExportCfg(cache=False))
    assert c.primitive is None and len(c.hulls) == 1 and len(c.hulls[0][0]) <= 64


def u_block() -> trimesh.Trimesh:
    parts = [trimesh.creation.box((0.12, 0.04, 0.03))]
    for x in (-0.04, 0.04):
        b = trimesh.creation.box((0.04, 0.04, 0.08))
        b.apply_translation([x, 0.0, 0.055])
        parts.append(b)
    return trimesh.boolean.union(parts, engine="manifold")


@pytest.mark.parametrize("strict", [False, True])
def test_tight_budget_warns_or_refuses(tmp_path, caplog, strict: bool) -> None:
    from real2sim.errors import StageError
    from real2sim.export.config import ExportCfg, ValidateCfg
    from real2sim.export.package import export_scene
    from real2sim.scene import Scene, SceneObject, Support

    scene = Scene(Support(size=(0.5, 0.5)), (SceneObject("u", u_block()),))
    cfg = ExportCfg(
        max_hulls=1,
        max_hull_vertices=8,
        workers=1,
        cache=False,
        render=False,
        strict=strict,
        validate_cfg=ValidateCfg(max_surface_distance=0.05),
    )
    out = tmp_path / "pkg"
    if strict:
        with pytest.raises(StageError, match="collision-to-surface"):
            export_scene(scene, out, cfg)
        assert not out.exists()
        return
    with caplog.at_level(logging.WARNING):
        pkg = export_scene(scene, out, cfg)
    assert (out / "scene.xml").is_file() and pkg.ok
    warned = [r.getMessage() for r in caplog.records if "collision-to-surface" in r.getMessage()]
    assert warned and "of diagonal" in warned[0] and "best fidelity within the budget" in warned[0]
