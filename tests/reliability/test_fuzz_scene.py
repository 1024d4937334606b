"""``load_scene`` on 1,000 structurally mutated ``scene.json`` files (a value swapped for another JSON type, a key
removed): only one-line ``InputError``s. Found: a list or number where an object belongs raised AttributeError."""

from __future__ import annotations

import json
import random

import pytest
import trimesh

from real2sim.errors import InputError, Real2SimError
from real2sim.scene import Scene, SceneObject, Support, load_scene, save_scene

VALUES = [
    None,
    [],
    {},
    "x",
    -1,
    0,
    1e308,
    True,
    [1, 2],
    [[1.0] * 4] * 4,
    {"a": 1},
    "meshes/box.ply",
    [1, 2, 3],
]


def _paths(node, path=()):
    yield path
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from _paths(child, (*path, key))


def _mutant(doc: dict, rng: random.Random):
    doc = json.loads(json.dumps(doc))
    for _ in range(rng.choice((1, 1, 2))):
        path = rng.choice(list(_paths(doc)))
        new = json.loads(json.dumps(rng.choice(VALUES)))
        if not path:
            doc = new
            continue
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and rng.random() < 0.2:
            del parent[path[-1]]
        else:
            parent[path[-1]] = new
        if not isinstance(doc, (dict, list)):
            break
    return doc


@pytest.fixture()
def scene(tmp_path):
    objs = (SceneObject("box", trimesh.creation.box((0.1, 0.1, 0.1)), rgba=(1, 0, 0, 1), source="scan"),)
    return save_scene(Scene(Support(size=(1.0, 1.0)), objs), tmp_path / "scene")


def test_structural_mutants_of_scene_json_are_one_line_input_errors(scene):
    doc = json.loads((scene / "scene.json").read_text())
    rng, crashes = random.Random(0), []
    for k in range(1000):
        (scene / "scene.json").write_text(json.dumps(_mutant(doc, rng)))
        try:
            load_scene(scene)
        except Real2SimError as exc:
            if "\n" in str(exc):
                crashes.append((k, repr(exc)))
        except Exception as exc:  # noqa: BLE001 - any other type is a finding
            crashes.append((k, f"{type(exc).__name__}: {exc}"))
    assert not crashes, crashes[:10]


@pytest.mark.parametrize("text", ["[]", '{"version": 1, "frame": [], "support": {}, "objects": []}',
                                  '{"version": 1, "frame": {"up": "+z", "units": "m"}, "support": {"type": "plane", '
                                  '"normal": [0, 0, 1], "point": [0, 0, 0]}, "objects": [3]}'])  # fmt: skip
def test_a_list_or_number_where_an_object_belongs_is_an_input_error(scene, text):
    (scene / "scene.json").write_text(text)
    with pytest.raises(InputError, match="scene.json: invalid scene"):
        load_scene(scene)
