"""SfM on the real temple ring (19 views): registration and pose accuracy; photo CLI error paths."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from real2sim.cli import cli
from real2sim.recon.photos.align import pose_errors
from real2sim.recon.photos.sfm import SfmCfg, parse_intrinsics, read_middlebury_poses, run_sfm


@pytest.fixture(scope="module")
def temple(shared_data):
    d = shared_data / "photos" / "temple_ring"
    model, params = parse_intrinsics(str(d / "templeR_par.txt"))
    return d, run_sfm(d, SfmCfg(camera_model=model, intrinsics=params))


def test_temple_known_intrinsics(temple):
    d, sfm = temple
    assert len(sfm.registered) == 19 and not sfm.unregistered
    e = pose_errors(sfm.cam_from_world, read_middlebury_poses(d / "templeR_par.txt"))
    assert e.median_rotation_deg <= 0.5
    assert e.median_centre_rel <= 0.01


def test_too_few_and_corrupt_images(tmp_path, shared_data):
    import shutil

    src = shared_data / "photos" / "temple_ring"
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(src / "templeR0013.png", one)
    r = CliRunner().invoke(cli, ["recon", "photos", str(one), "-o", str(tmp_path / "o1"), "--poses-only"])
    assert r.exit_code == 1 and "1 images found, SfM needs at least 3" in r.output
    (one / "broken.jpg").write_bytes(b"not a jpeg")
    r = CliRunner().invoke(cli, ["recon", "photos", str(one), "-o", str(tmp_path / "o2")])
    assert r.exit_code == 1 and "broken.jpg: cannot be decoded" in r.output
    assert r.output.strip().count("\n") == 0
