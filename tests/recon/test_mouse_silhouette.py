"""The silhouette check of ``photos/mouse_table`` (``tests.helpers.silhouette``): the mouse's mask found in the real
photos holds the author's sparse points projected with the author's cameras, and the author's points on the mouse
span the mouse's width but stop short of its length (the plain palm rest has few points), which is why the
benchmark measures the mesh's proportions against the photos as well."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from real2sim.recon.photos.sfm import read_image
from tests.helpers.mouse_ref import mouse_frame, reference_model, reference_views
from tests.helpers.silhouette import axis_extents, mesh_silhouette, object_mask, project

TOP, SIDE = "4ED467EEDBE19A10A5A1C8C5D9649ABA.jpg", "31F7431A0455F31E3A5599C70D1E240C.jpg"


@pytest.fixture(scope="module")
def ref(shared_data):
    data = shared_data / "photos" / "mouse_table"
    cams, pts = reference_model(data)
    views, _, _ = reference_views(data)
    return data, views, mouse_frame(cams, pts)["points"]


@pytest.mark.parametrize("name", [TOP, SIDE])
def test_mask_holds_the_authors_points_and_they_stop_short(ref, name):
    data, views, on_mouse = ref
    v = views[name]
    mask = object_mask(read_image(data / "images" / name))
    assert 0.05 < mask.mean() < 0.2  # the mouse, not the table nor a speck
    q = np.round(project(on_mouse, v)).astype(int)
    assert np.all((q >= 0) & (q < v.size)), "the author's points on the mouse are in view"
    assert mask[q[:, 1], q[:, 0]].mean() > 0.8
    hull = trimesh.convex.convex_hull(on_mouse)
    sil = mesh_silhouette(hull.vertices, hull.faces, v)
    assert (sil & mask).sum() / sil.sum() > 0.85  # the projected hull lies on the mouse
    e_mask, e_pts = axis_extents(mask, project(on_mouse, v))
    long, short = e_pts / e_mask
    assert short > 0.95 and long < 0.85, (long, short)
