"""``session.toml`` carries each reconstruction route's options (object-only, scales, intrinsics, known distance,
sensor origin) into ``real2sim process``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from real2sim.errors import InputError
from real2sim.pipeline.process import ProcessCfg, run_process
from real2sim.pipeline.session import load_session
from real2sim.recon.io.splat import GaussianSplat, write_splat


def _touch(p: Path) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(b"x")
    return p


def test_route_options_are_read(tmp_path: Path) -> None:
    for rel in ("lidar/a.pcd", "images/0.jpg", "images/d.toml", "splats/s.ply"):
        _touch(tmp_path / rel)
    (tmp_path / "session.toml").write_text(
        """
[lidar]
sensor_origin = [1.0, -2, 0.5]
[photos]
dir = "images"
known_distance = "images/d.toml"
camera_model = "PINHOLE"
intrinsics = [900, 900, 320, 240]
scale = 0.02
[splats]
scale = 0.01
[objects]
object_only = true
"""
    )
    s = load_session(tmp_path)
    assert s.sensor_origin == (1.0, -2.0, 0.5)
    assert s.known_distance == tmp_path / "images" / "d.toml"
    assert s.camera_model == "PINHOLE" and s.intrinsics == (900.0, 900.0, 320.0, 240.0)
    assert s.photos_scale == 0.02 and s.splat_scale == 0.01
    assert s.lidar_object_only and s.photos_object_only and s.splat_object_only  # [objects] default
    (tmp_path / "session.toml").write_text("[objects]\nobject_only = true\n[lidar]\nobject_only = false\n")
    s = load_session(tmp_path)
    assert not s.lidar_object_only and s.splat_object_only


@pytest.mark.parametrize(
    "toml, message",
    [
        ("[lidar]\nsensor_origin = [1, 2]\n", "lidar.sensor_origin must be [x, y, z]"),
        ("[splats]\nscale = 0\n", "splats.scale must be > 0"),
        ('[objects]\nobject_only = "yes"\n', "objects.object_only must be true or false"),
    ],
)
def test_bad_route_option_names_file(tmp_path: Path, toml: str, message: str) -> None:
    (tmp_path / "session.toml").write_text(toml)
    with pytest.raises(InputError) as e:
        load_session(tmp_path)
    assert message in str(e.value) and "session.toml" in str(e.value)


def _blob_splat(n: int = 3000, seed: int = 0) -> GaussianSplat:
    """Opaque Gaussians on an ellipsoid of semi-axes 5, 4, 3 splat units (no support in view)."""
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, 3))
    means = v / np.linalg.norm(v, axis=1, keepdims=True) * [5.0, 4.0, 3.0]
    rot = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
    return GaussianSplat(means, np.full((n, 3), 0.15), rot, np.full(n, 0.95), np.full((n, 3), 0.5))


@pytest.mark.slow  # one splat reconstruction: ~10 s alone, ~30 s on a loaded machine
def test_splat_only_session_uses_object_only_and_scale(tmp_path: Path) -> None:
    write_splat(tmp_path / "session" / "splats" / "blob.ply", _blob_splat())
    (tmp_path / "session" / "session.toml").write_text("[splats]\nobject_only = true\nscale = 0.01\n")
    res = run_process(
        ProcessCfg(session_dir=tmp_path / "session", out_dir=tmp_path / "out", stages=("recon",))
    )
    from real2sim.scene import load_scene

    (obj,) = load_scene(tmp_path / "out" / "scene").objects
    assert obj.mesh.is_watertight
    np.testing.assert_allclose(np.sort(obj.mesh.extents), [0.06, 0.08, 0.10], rtol=0.15)  # metres, not units
    assert res.stage("recon").summary is not None


class _Stop(Exception):
    pass


@pytest.mark.parametrize("route", ["lidar", "photos", "splat"])
def test_process_hands_the_route_options_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route: str
) -> None:
    """Each route's recon config gets the session's options (the stage is stopped once its config is built)."""
    import real2sim.recon.photos.run as photos
    import real2sim.recon.pointcloud.run as pointcloud
    import real2sim.recon.splats.run as splat_recon

    folder = {"lidar": "lidar/a.pcd", "photos": "images/0.jpg", "splat": "splats/s.ply"}[route]
    _touch(tmp_path / "s" / folder)
    _touch(tmp_path / "s" / "d.toml")
    (tmp_path / "s" / "session.toml").write_text(
        '[lidar]\nsensor_origin = [1, 2, 3]\nunits = "cm"\n'
        '[photos]\nknown_distance = "d.toml"\ncamera_model = "PINHOLE"\nintrinsics = [9, 8, 7, 6]\nscale = 0.5\n'
        "[splats]\nscale = 0.25\n[objects]\nobject_only = true\ndensity = 700\n"
    )
    seen = []

    def grab(cfg):
        seen.append(cfg)
        raise _Stop

    monkeypatch.setattr(pointcloud, "run_recon_pointcloud", grab)
    monkeypatch.setattr(photos, "run_recon_photos", grab)
    monkeypatch.setattr(splat_recon, "run_recon_splat", grab)
    with pytest.raises(_Stop):
        run_process(ProcessCfg(session_dir=tmp_path / "s", out_dir=tmp_path / "out", stages=("recon",)))
    (cfg,) = seen
    assert cfg.object_only
    if route == "lidar":
        assert cfg.sensor_origin == (1.0, 2.0, 3.0) and cfg.units == "cm" and cfg.density == 700
    elif route == "photos":
        assert cfg.known_distance == tmp_path / "s" / "d.toml" and cfg.scale == 0.5
        assert cfg.sfm.camera_model == "PINHOLE" and cfg.sfm.intrinsics == (9.0, 8.0, 7.0, 6.0)
    else:
        assert cfg.scale == 0.25 and cfg.density == 700
