"""The decomposition cache key: mesh content + the options marked as shaping collision geometry + the code version."""

from __future__ import annotations

from dataclasses import fields, replace

import trimesh

from real2sim.export.collision.cache import cache_key, code_version
from real2sim.export.config import ExportCfg, collision_options


def test_collision_options_are_the_marked_fields_in_field_order():
    cfg = ExportCfg()
    opts = collision_options(cfg)
    marked = [f.name for f in fields(cfg) if f.metadata.get("collision")]
    assert list(opts) == marked and "visual_faces" not in opts and "workers" not in opts
    assert {"max_hulls", "max_hull_vertices", "coacd_threshold", "refine_samples", "seed"} <= set(opts)


def test_the_key_follows_mesh_options_and_code_only():
    mesh = trimesh.creation.box((0.1, 0.05, 0.02))
    cfg = ExportCfg()
    key = cache_key(mesh, cfg)
    assert key == cache_key(mesh.copy(), cfg)
    assert key == cache_key(
        mesh, replace(cfg, visual_faces=5000, workers=1, render=False)
    )  # no collision option
    assert key != cache_key(mesh, replace(cfg, refine_samples=8000))
    assert key != cache_key(trimesh.creation.box((0.1, 0.05, 0.03)), cfg)
    assert len(code_version()) == 64 and code_version() == code_version()
