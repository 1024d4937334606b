import json

import numpy as np
import pytest
import trimesh

from real2sim.errors import InputError
from real2sim.provenance import Provenance
from real2sim.scene import Scene, SceneObject, Support, load_scene, sanitize_name, save_scene


def _scene() -> Scene:
    rng = np.random.default_rng(0)
    box = trimesh.creation.box((0.1, 0.2, 0.3))
    box.vertices += rng.normal(0, 1e-7, box.vertices.shape)  # full float64 precision must survive
    cyl = trimesh.creation.cylinder(0.05, 0.1, sections=24)
    cyl.visual.vertex_colors = np.tile([200, 10, 30, 255], (len(cyl.vertices), 1)).astype(np.uint8)
    T = np.eye(4)
    T[:3, 3] = [0.1, -0.2, 0.15]
    return Scene(
        support=Support("plane", (0.0, 0.0, 1.0), (0.0, 0.0, 0.0), (1.2, 0.8)),
        objects=(
            SceneObject(
                "box", box, T, "dynamic", mass=0.3, density=None, rgba=(1, 0, 0, 1), source="scan.ply#1"
            ),
            SceneObject("can", cyl, np.eye(4), "static", density=700.0, friction=(1.0, 0.01, 0.001)),
        ),
        world_from_input={"scan.ply": T},
        provenance=Provenance({"scan.ply": "ab" * 32}, ("read", "segment"), {"numpy": "2"}, {"voxel": 0.002}),
    )


def test_scene_round_trip_is_exact(tmp_path):
    s = _scene()
    save_scene(s, tmp_path / "a")
    loaded = load_scene(tmp_path / "a")
    for o, l in zip(s.objects, loaded.objects, strict=True):
        assert o.name == l.name and o.role == l.role and o.mass == l.mass and o.density == l.density
        assert np.array_equal(o.mesh.vertices, l.mesh.vertices)
        assert np.array_equal(o.mesh.faces, l.mesh.faces)
        assert np.array_equal(o.world_from_object, l.world_from_object)
        assert o.friction == l.friction and o.rgba == l.rgba and o.source == l.source
    assert np.array_equal(loaded.objects[1].mesh.visual.vertex_colors, s.objects[1].mesh.visual.vertex_colors)
    assert loaded.support == s.support
    assert loaded.provenance == s.provenance
    assert np.array_equal(loaded.world_from_input["scan.ply"], s.world_from_input["scan.ply"])
    # saving what was loaded gives the same bytes
    save_scene(loaded, tmp_path / "b")
    for rel in ("scene.json", "meshes/box.ply", "meshes/can.ply"):
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    d = json.loads((tmp_path / "a" / "scene.json").read_text())
    assert d["frame"] == {"up": "+z", "units": "m"} and d["version"] == 1
    assert d["objects"][0]["mesh"] == "meshes/box.ply" and len(d["objects"][0]["world_from_object"]) == 4


def test_box_support_round_trip(tmp_path):
    pose = np.eye(4)
    pose[2, 3] = -0.02
    s = Scene(Support("box", size=(1.0, 0.6, 0.04), world_from_support=pose), ())
    save_scene(s, tmp_path / "s")
    sup = load_scene(tmp_path / "s").support
    assert sup.kind == "box" and sup.size == (1.0, 0.6, 0.04) and np.array_equal(sup.world_from_support, pose)
    assert sup.top_height() == pytest.approx(0.0)


def test_failed_save_leaves_previous_output(tmp_path):
    s = _scene()
    save_scene(s, tmp_path / "a")
    before = (tmp_path / "a" / "scene.json").read_bytes()
    bad = Scene(s.support, (s.objects[0], s.objects[0]))  # duplicate names
    with pytest.raises(ValueError):
        save_scene(bad, tmp_path / "a")
    assert (tmp_path / "a" / "scene.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.pop("objects"), "missing field 'objects'"),
        (lambda d: d.update(version=99), "unsupported version"),
        (lambda d: d["objects"][0].update(role="flying"), "role must be"),
        (lambda d: d["objects"][0].update(world_from_object=[[1, 0], [0, 1]]), "4x4"),
        (lambda d: d["frame"].update(up="+y"), "frame must be"),
    ],
)
def test_malformed_scene_names_file(tmp_path, mutate, message):
    save_scene(_scene(), tmp_path / "a")
    js = tmp_path / "a" / "scene.json"
    d = json.loads(js.read_text())
    mutate(d)
    js.write_text(json.dumps(d))
    with pytest.raises(InputError) as e:
        load_scene(tmp_path / "a")
    assert str(js) in str(e.value) and message in str(e.value)


def test_truncated_mesh_and_json(tmp_path):
    save_scene(_scene(), tmp_path / "a")
    mesh = tmp_path / "a" / "meshes" / "box.ply"
    mesh.write_bytes(mesh.read_bytes()[:200])
    with pytest.raises(InputError, match="box.ply"):
        load_scene(tmp_path / "a")
    js = tmp_path / "a" / "scene.json"
    js.write_text(js.read_text()[:50])
    with pytest.raises(InputError, match="malformed JSON"):
        load_scene(tmp_path / "a")


def test_sanitize_name():
    taken: set[str] = set()
    assert sanitize_name("my mug", taken) == "my_mug"
    assert sanitize_name("my mug", taken) == "my_mug_2"
    assert sanitize_name('a"<b>', taken) == "a_b"
    assert sanitize_name("Café", taken) == "Cafe"
    assert sanitize_name("3d", taken) == "obj_3d"
    assert sanitize_name("日本", taken) == "object"
