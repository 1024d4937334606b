"""Splat PLY reading: activations on a synthetic splat, missing properties, the real toy-cat splat, CLI errors."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from real2sim.cli import cli
from real2sim.errors import InputError
from real2sim.recon.io.splat import GaussianSplat, read_splat, write_splat


def _synthetic(n: int = 50, seed: int = 0) -> GaussianSplat:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    q *= np.sign(q[:, :1])
    return GaussianSplat(rng.normal(size=(n, 3)), rng.uniform(0.01, 0.1, (n, 3)), q, rng.uniform(0.05, 0.95, n),
                         rng.uniform(0.1, 0.9, (n, 3)))  # fmt: skip


def test_round_trip_activations(tmp_path):
    s = _synthetic()
    write_splat(tmp_path / "s.ply", s)
    r = read_splat(tmp_path / "s.ply")
    np.testing.assert_allclose(r.means, s.means, atol=1e-6)
    np.testing.assert_allclose(r.scales, s.scales, rtol=1e-5)
    np.testing.assert_allclose(r.opacities, s.opacities, atol=1e-5)
    np.testing.assert_allclose(r.colors, s.colors, atol=1e-5)
    np.testing.assert_allclose(r.rotations, s.rotations, atol=1e-6)
    rm = r.rotation_matrices()
    np.testing.assert_allclose(rm @ rm.transpose(0, 2, 1), np.broadcast_to(np.eye(3), rm.shape), atol=1e-5)


def test_missing_property_is_one_input_error(tmp_path):
    p = tmp_path / "bad.ply"
    head = "ply\nformat binary_little_endian 1.0\nelement vertex 1\n"
    head += "".join(f"property float {k}\n" for k in ("x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity"))
    p.write_bytes((head + "end_header\n").encode() + np.zeros(7, "<f4").tobytes())
    with pytest.raises(InputError, match="missing property 'scale_0'") as e:
        read_splat(p)
    assert str(p) in str(e.value)
    res = CliRunner().invoke(cli, ["recon", "splat", str(p), "-o", str(tmp_path / "out")])
    assert res.exit_code == 1
    assert res.output.strip().count("\n") == 0 and "missing property 'scale_0'" in res.output
    assert not (tmp_path / "out").exists()


def test_toy_cat_activation(shared_data):
    s = read_splat(shared_data / "splats" / "toy_cat_3dgs.ply")
    assert len(s) == 23261
    assert np.all((s.opacities >= 0) & (s.opacities <= 1)) and 0.3 < np.mean(s.opacities >= 0.5) < 1.0
    np.testing.assert_allclose(np.linalg.norm(s.rotations, axis=1), 1.0, atol=1e-9)
    assert np.all(s.rotations[:, 0] >= 0)
    assert 1.2 < np.ptp(s.means, axis=0).max() < 2.5  # about 1.6 units tall per the data README
