"""Real hand-held phone photos (``photos/mouse_table``: portrait and landscape shots of a mouse on a table) against
the author's COLMAP model: dense stereo between a portrait and a landscape view, camera groups and the EXIF focal
prior, and SfM registration and camera rotations on downscaled images."""

from __future__ import annotations

import shutil

import cv2
import numpy as np
import pytest

from real2sim.recon.photos.align import pose_errors
from real2sim.recon.photos.features import camera_groups
from real2sim.recon.photos.mvs import MvsCfg
from real2sim.recon.photos.sfm import SfmCfg, run_sfm
from real2sim.recon.photos.stereo import depth_from_pair
from tests.helpers.mouse_ref import reference_model, reference_views

PORTRAIT, LANDSCAPE = "168947FC6F08F497466D941859189428.jpg", "FAD4614243D2586396D14FB78D5E3B22.jpg"


@pytest.fixture(scope="module")
def mouse(shared_data):
    return shared_data / "photos" / "mouse_table"


def test_portrait_landscape_pair_depth(mouse):
    """A portrait and a landscape view (the author's poses, images at half size) give depth maps of each view's own
    shape that agree with the author's sparse points."""
    views, pts, seen = reference_views(mouse, factor=1 / 3)
    va, vb = views[PORTRAIT], views[LANDSCAPE]
    assert va.size == (480, 640) and vb.size == (640, 480)

    def img(v):
        return cv2.resize(cv2.imread(str(mouse / "images" / v.name)), v.size, interpolation=cv2.INTER_AREA)

    shared = pts[sorted(seen[va.name] & seen[vb.name])]
    out = dict(depth_from_pair(va, vb, img(va), img(vb), shared, MvsCfg(max_angle_deg=40)))
    assert set(out) == {va.name, vb.name}
    for v in (va, vb):
        depth = out[v.name]
        assert depth.shape == (v.size[1], v.size[0])
        x = shared @ v.R.T + v.t
        uv = np.round(x[:, :2] / x[:, 2:] * np.diag(v.K)[:2] + v.K[:2, 2]).astype(int)
        d = depth[uv[:, 1], uv[:, 0]]
        ok = d > 0
        assert ok.sum() >= 10, ok.sum()
        assert np.median(np.abs(d[ok] - x[ok, 2]) / x[ok, 2]) < 0.01


def test_camera_groups_by_size_and_exif_focal(mouse, tmp_path):
    """Portrait and landscape shots are two cameras; an EXIF focal length makes its own group and is COLMAP's prior."""
    from PIL import Image

    d = tmp_path / "img"
    d.mkdir()
    for n in (PORTRAIT, LANDSCAPE, "0B1E85587C5F1E4DF86B78A398187918.jpg"):
        shutil.copy(mouse / "images" / n, d / n)
    with Image.open(mouse / "images" / LANDSCAPE) as im:
        exif = Image.Exif()
        exif.get_ifd(0x8769)[0xA405] = 26  # 35 mm equivalent focal length
        im.save(d / "exif.jpg", exif=exif)
    names = sorted(p.name for p in d.iterdir())
    groups = camera_groups(d, names, None)
    assert sorted(map(sorted, groups)) == sorted(
        [[PORTRAIT], sorted([LANDSCAPE, "0B1E85587C5F1E4DF86B78A398187918.jpg"]), ["exif.jpg"]]
    )
    assert camera_groups(d, names, True) == [names] and len(camera_groups(d, names, False)) == 4
    import pycolmap

    from real2sim.recon.photos.features import extract_features

    extract_features(
        d, ["exif.jpg", LANDSCAPE], tmp_path / "db.db", SfmCfg(max_image_size=320, max_features=200), 0
    )
    db = pycolmap.Database.open(str(tmp_path / "db.db"))
    cams = sorted(db.read_all_cameras(), key=lambda c: c.has_prior_focal_length)
    db.close()
    # 26 mm (35 mm equivalent, 43.27 mm diagonal) on a 1600 px diagonal; no EXIF: COLMAP's 1.2 x the longer side
    assert cams[1].has_prior_focal_length and cams[1].focal_length == pytest.approx(
        26 / 43.27 * 1600, rel=1e-3
    )
    assert not cams[0].has_prior_focal_length and cams[0].focal_length == pytest.approx(1.2 * 1280)


@pytest.mark.slow
def test_mouse_table_registration_and_rotations(mouse):
    """Downscaled SfM (640 px, 1024 features): >= 90 % registered, median rotation within 1 deg of the author's."""
    sfm = run_sfm(mouse / "images", SfmCfg(max_image_size=640, max_features=1024))
    assert len(sfm.registered) >= 0.9 * len(sfm.images), sfm.unregistered
    ref, _ = reference_model(mouse)
    e = pose_errors(sfm.cam_from_world, ref)
    assert e.median_rotation_deg <= 1.0, e.summary()
