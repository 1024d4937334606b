"""The real toy-cat splat (`recon splat --object-only`): a solid, watertight mesh scored against all its opaque
Gaussians (not only those kept), hidden interior Gaussians found, and its export resting stably in MuJoCo with the
mass of that solid."""

from __future__ import annotations

import numpy as np
import pytest

from real2sim.recon.io.splat import GaussianSplat
from real2sim.recon.splats.clean import SplatCleanCfg, visible_mask
from real2sim.recon.splats.run import SplatReconCfg, run_recon_splat
from real2sim.recon.splats.score import score_solid

pytestmark = pytest.mark.slow  # one reconstruction (~30 s) and one export of the toy cat


@pytest.fixture(scope="module")
def cat(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("cat") / "scene"
    res = run_recon_splat(SplatReconCfg(input=shared_data / "splats" / "toy_cat_3dgs.ply", out_dir=out,
                                        object_only=True))  # fmt: skip
    return out, res


def test_cat_is_a_solid_on_all_opaque_gaussians(cat):
    _, res = cat
    (obj,) = res.scene.objects
    mesh = obj.mesh_in_world()
    w = res.world_from_splat
    opaque = res.splat.opacities >= SplatCleanCfg().min_opacity  # all of them, kept or not
    assert res.kept[opaque].mean() >= 0.9  # floaters and oversized Gaussians are a minority
    sc = score_solid(mesh, res.splat.means[opaque] @ w[:3, :3].T + w[:3, 3])
    assert sc.watertight and sc.genus <= 2, sc
    assert sc.coverage >= 0.95, sc  # inside the solid or within 2 % of its height of the surface
    assert sc.hull_ratio >= 0.4, sc  # filled, not a thin shell
    assert sc.precision >= 0.6, sc  # and not bloated: the surface stays near the Gaussians


def test_cat_export_rests_stably(cat, tmp_path):
    from real2sim.export.config import ExportCfg
    from real2sim.export.package import export_scene
    from real2sim.export.validate import validate_package
    from real2sim.scene import load_scene

    out, res = cat
    (obj,) = res.scene.objects
    assert obj.mass is None and obj.density == SplatReconCfg().density  # mass = density x the solid's volume
    export_scene(load_scene(out), tmp_path / "pkg", ExportCfg(scene_dir=out, out_dir=tmp_path / "pkg"))
    checks = {c.name: c for c in validate_package(tmp_path / "pkg")}
    drift = [c for n, c in checks.items() if n.startswith("rest drift")]
    assert drift and all(c.passed for c in drift), drift
    assert all(c.passed for c in checks.values()), [c for c in checks.values() if not c.passed]
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(tmp_path / "pkg" / "scene.xml"))
    volume = obj.mesh_in_world().volume
    assert abs(model.body_mass[1:].sum() - obj.density * volume) <= 0.02 * obj.density * volume


def test_hidden_gaussians_inside_a_shell_are_found():
    """A closed shell of opaque Gaussians with a cluster inside: the inner ones are hidden, the shell visible."""
    rng = np.random.default_rng(0)
    n_shell, n_in = 20000, 300  # a closed, opaque shell (as training leaves on a surface)
    v = rng.normal(size=(n_shell, 3))
    shell = v / np.linalg.norm(v, axis=1, keepdims=True)
    inner = rng.normal(scale=0.2, size=(n_in, 3))
    means = np.concatenate([shell, inner])
    scales = np.full((len(means), 3), 0.03)  # about one opacity-grid voxel
    q = np.tile([1.0, 0, 0, 0], (len(means), 1))
    s = GaussianSplat(means, scales, q, np.full(len(means), 0.95), np.full((len(means), 3), 0.5))
    vis = visible_mask(s)
    assert vis[:n_shell].mean() > 0.9
    assert vis[n_shell:].mean() < 0.02
