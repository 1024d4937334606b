"""Photo colours are read from the stored pixels, as SfM placed the cameras, even when the photo carries an EXIF
orientation tag (a phone photo taken upright): applying the tag would rotate the image under the camera model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import trimesh

from real2sim.recon.photos.colour import Registration, colour_from_photos
from real2sim.recon.photos.sfm import Intrinsics, SfmResult
from real2sim.scene import Scene, SceneObject, Support

W, H, F = 640, 480, 500.0
RED, BLUE = (220, 20, 20), (20, 20, 220)


def _photo(path: Path, orientation: int | None) -> None:
    """Stored pixels: left half red, right half blue; optionally tagged with an EXIF orientation."""
    from PIL import Image

    px = np.zeros((H, W, 3), dtype=np.uint8)
    px[:, : W // 2] = RED
    px[:, W // 2 :] = BLUE
    img = Image.fromarray(px)
    exif = Image.Exif()
    if orientation is not None:
        exif[0x0112] = orientation
    img.save(path, quality=95, exif=exif.tobytes())


def _colours(tmp: Path, orientation: int | None) -> tuple[np.ndarray, np.ndarray]:
    d = tmp / f"o{orientation}"
    d.mkdir()
    _photo(d / "a.jpg", orientation)
    box = trimesh.creation.box((0.1, 0.1, 0.1))
    box = box.subdivide().subdivide()
    wfo = np.eye(4)
    wfo[2, 3] = 0.05
    scene = Scene(Support(size=(1.0, 1.0)), (SceneObject("box", box, wfo),))
    cam = np.diag([1.0, -1.0, -1.0, 1.0])  # 1 m above, looking down
    cam[2, 3] = 1.0
    sfm = SfmResult(
        image_dir=d,
        images=("a.jpg",),
        cam_from_world={"a.jpg": cam},
        intrinsics={"a.jpg": Intrinsics("PINHOLE", W, H, (F, F, W / 2 - 0.5, H / 2 - 0.5))},
        points=np.zeros((0, 3)),
        colors=np.zeros((0, 3)),
        unregistered={},
        mapper="global",
        timings={},
    )
    out = colour_from_photos(scene, sfm, 1.0, Registration(np.eye(4), 1.0))
    m = out.objects[0].mesh
    return np.asarray(m.vertices), np.asarray(m.visual.vertex_colors)[:, :3].astype(float)


def test_exif_orientation_does_not_rotate_the_photo_under_its_camera(tmp_path):
    for orientation in (None, 6):
        v, c = _colours(tmp_path, orientation)
        top = v[:, 2] > 0.049
        left, right = top & (v[:, 0] < -0.01), top & (v[:, 0] > 0.01)
        assert left.sum() >= 8 and right.sum() >= 8
        assert np.all(np.abs(c[left] - RED).max(axis=1) < 40), orientation
        assert np.all(np.abs(c[right] - BLUE).max(axis=1) < 40), orientation
