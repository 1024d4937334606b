"""`real2sim recon splat` with default options on a splat of one object and no table: the scene route finds no
support, says so in one warning, and the splat becomes one solid object (its volume, not a shell's)."""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner

from real2sim.cli import cli
from real2sim.recon.io.splat import GaussianSplat, write_splat
from real2sim.scene import load_scene


def test_no_support_gives_one_solid_object(tmp_path):
    rng = np.random.default_rng(0)
    v = rng.normal(size=(3000, 3))
    v = v / np.linalg.norm(v, axis=1, keepdims=True) * [0.6, 0.4, 0.3]  # an ellipsoid's surface, no table
    n = len(v)
    s = GaussianSplat(
        v, np.full((n, 3), 0.01), np.tile([1.0, 0, 0, 0], (n, 1)), np.full(n, 0.9), np.full((n, 3), 0.5)
    )
    write_splat(tmp_path / "egg.ply", s)
    res = CliRunner().invoke(
        cli, ["recon", "splat", str(tmp_path / "egg.ply"), "-o", str(tmp_path / "scene")]
    )
    assert res.exit_code == 0, res.output
    scene = load_scene(tmp_path / "scene")
    (obj,) = scene.objects
    mesh = obj.mesh_in_world()
    solid = 4 / 3 * np.pi * 0.6 * 0.4 * 0.3
    assert mesh.is_watertight and 0.85 * solid < mesh.volume < 1.15 * solid, mesh.volume / solid
    assert (
        abs(mesh.extents[2] - 0.6) < 0.05 and abs(mesh.bounds[0, 2]) < 1e-6
    )  # at rest on z = 0, flat side down
    prov = json.loads((tmp_path / "scene" / "scene.json").read_text())
    assert "solid_object" in json.dumps(prov)
