"""Bad meshes are repaired with a warning or refused with one clear InputError line."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from real2sim.errors import InputError
from real2sim.export.objects.repair import repair_mesh


def test_empty_mesh_is_refused():
    with pytest.raises(InputError, match="empty"):
        repair_mesh(trimesh.Trimesh(np.zeros((0, 3)), np.zeros((0, 3), dtype=int)), "object 'e'")


def test_flat_mesh_is_refused():
    m = trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], [[0, 1, 2], [1, 3, 2]], process=False)
    with pytest.raises(InputError) as e:
        repair_mesh(m, "object 'flat'")
    msg = str(e.value)
    assert "object 'flat'" in msg and "\n" not in msg


def test_nan_vertices_are_dropped_with_warning():
    box = trimesh.creation.box((0.1, 0.1, 0.1))
    v = np.vstack([box.vertices, [[np.nan, 0, 0]]])
    f = np.vstack([box.faces, [[0, 1, 8]]])
    r = repair_mesh(trimesh.Trimesh(v, f, process=False), "object 'n'")
    assert r.mesh.is_watertight and r.mesh.volume == pytest.approx(1e-3, rel=1e-9)
    assert any("NaN" in w for w in r.warnings)


def test_all_nan_is_refused():
    m = trimesh.Trimesh(np.full((3, 3), np.nan), [[0, 1, 2]], process=False)
    with pytest.raises(InputError, match="finite"):
        repair_mesh(m, "object 'x'")


def test_hole_and_flipped_faces_are_repaired():
    s = trimesh.creation.icosphere(3, 0.05)
    f = s.faces.copy()
    f[:40] = f[:40, ::-1]  # inconsistent winding
    holed = trimesh.Trimesh(s.vertices, f[5:], process=False)  # and a hole
    assert not holed.is_watertight
    r = repair_mesh(holed, "object 'h'")
    assert r.mesh.is_watertight and r.mesh.is_winding_consistent
    assert r.mesh.volume == pytest.approx(s.volume, rel=0.02)
    assert r.warnings


def test_non_manifold_duplicate_faces_are_repaired():
    box = trimesh.creation.box((0.1, 0.2, 0.3))
    f = np.vstack([box.faces, box.faces[:3]])  # duplicated faces make edges non-manifold
    r = repair_mesh(trimesh.Trimesh(box.vertices, f, process=False), "object 'd'")
    assert r.mesh.is_watertight and r.mesh.volume == pytest.approx(0.006, rel=1e-9)
    assert any("duplicate" in w for w in r.warnings)


def test_bunny_reference_is_repaired(bunny_path):
    m = trimesh.load(bunny_path, process=False)
    assert not m.is_watertight
    r = repair_mesh(m, "object 'bunny'")
    assert r.mesh.is_watertight and r.mesh.volume > 0
    # the filled holes are small: volume close to the convex-hull-bounded solid, well above a thin shell
    assert 0.5 * m.convex_hull.volume < r.mesh.volume < m.convex_hull.volume
