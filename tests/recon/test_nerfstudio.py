"""transforms.json against nerfstudio's documented conventions, and the missing-nerfstudio message."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from real2sim.errors import NotBuiltError
from real2sim.recon.photos.nerfstudio import INSTALL_HINT, train_splatfacto, write_nerfstudio_dataset
from real2sim.recon.photos.sfm import Intrinsics, SfmResult


def _sfm(tmp_path) -> SfmResult:
    import cv2

    d = tmp_path / "imgs"
    d.mkdir()
    cams, intr = {}, {}
    rng = np.random.default_rng(0)
    for i in range(3):
        n = f"im{i}.png"
        cv2.imwrite(str(d / n), (rng.uniform(0, 255, (48, 64, 3))).astype(np.uint8))
        a = 0.5 * i
        r = np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])
        m = np.eye(4)
        m[:3, :3] = r
        m[:3, 3] = [0.1 * i, -0.2, 2.0]
        cams[n] = m
        intr[n] = Intrinsics("SIMPLE_RADIAL", 64, 48, (50.0, 31.0, 23.0, 0.01))
    return SfmResult(d, tuple(sorted(cams)), cams, intr, np.zeros((0, 3)), np.zeros((0, 3)), {}, "test", {})


def test_transforms_json_fields(tmp_path):
    sfm = _sfm(tmp_path)
    path = write_nerfstudio_dataset(sfm, tmp_path / "ns")
    t = json.loads(path.read_text())
    assert t["camera_model"] == "OPENCV"
    assert (t["fl_x"], t["fl_y"], t["cx"], t["cy"], t["w"], t["h"]) == (50.0, 50.0, 31.0, 23.0, 64, 48)
    assert t["k1"] == 0.01 and t["k2"] == 0.0 and t["p1"] == 0.0 and t["p2"] == 0.0
    assert len(t["frames"]) == 3
    for fr in t["frames"]:
        assert (tmp_path / "ns" / fr["file_path"]).is_file()
        c2w = np.array(fr["transform_matrix"])
        cfw = sfm.cam_from_world[fr["file_path"].split("/")[-1]]
        # OpenGL camera axes: nerfstudio's camera looks along its -z; OpenCV's looks along +z.
        np.testing.assert_allclose(c2w[:3, 3], -cfw[:3, :3].T @ cfw[:3, 3], atol=1e-12)
        np.testing.assert_allclose(-c2w[:3, 2], cfw[2, :3], atol=1e-12)  # viewing direction
        np.testing.assert_allclose(c2w[:3, 1], -cfw[1, :3], atol=1e-12)  # image up = -OpenCV y
        np.testing.assert_allclose(c2w[3], [0, 0, 0, 1])


@pytest.mark.skipif(
    shutil.which("ns-train") is not None, reason="nerfstudio installed: the hint path is not taken"
)
def test_missing_nerfstudio_one_line(tmp_path):
    with pytest.raises(NotBuiltError) as e:
        train_splatfacto(tmp_path, tmp_path)
    assert (
        str(e.value) == INSTALL_HINT and "\n" not in INSTALL_HINT and "pip install nerfstudio" in INSTALL_HINT
    )
