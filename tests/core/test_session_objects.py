"""``[objects.NAME]`` tables of ``session.toml``: known mass, density, friction and material of single objects, checked
where they enter (one error naming session.toml) and handed to export as the export options are."""

from __future__ import annotations

import json

import pytest
import trimesh

from real2sim.errors import InputError
from real2sim.export.config import ExportCfg
from real2sim.export.physics.values import Given
from real2sim.pipeline.process import ProcessCfg, check_object_names, object_options, run_process
from real2sim.pipeline.session import load_session
from real2sim.scene import Scene, SceneObject, Support, save_scene

TOML = """
[objects]
density = 600.0
friction = 0.7

[objects.box]
mass = 0.321

[objects.mug]
material = "Ceramic"
friction = 0.5
"""


def test_object_tables_are_read_and_become_the_export_options(tmp_path):
    (tmp_path / "session.toml").write_text(TOML)
    s = load_session(tmp_path)
    assert s.density == 600.0 and s.friction == 0.7
    assert s.object_values == {"box": Given(mass=0.321), "mug": Given(friction=0.5, material="ceramic")}
    opts = object_options(s)
    assert opts == {
        "mass": ("box=0.321",),
        "density": (),
        "friction": ("mug=0.5",),
        "material": ("mug=ceramic",),
    }
    assert ExportCfg(**opts).given() == s.object_values  # the same values as the options give


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("mass = -1.0", "objects.box.mass = -1.0: must be a positive, finite number of kg"),
        ("mass = nan", "objects.box.mass = nan: must be a positive"),
        ("density = 0", "objects.box.density = 0: must be a positive, finite number of kg/m^3"),
        ("friction = -0.2", "objects.box.friction = -0.2: must be a finite number >= 0"),
        ('mass = "heavy"', "objects.box.mass must be a number, got 'heavy'"),
        ('material = "rubbr"', "objects.box.material: unknown material 'rubbr' (did you mean rubber?)"),
        ("mas = 0.3", "objects.box: unknown key 'mas' (keys: mass, density, friction, material)"),
        ("mass = 0.3\ndensity = 500", "objects.box has both a mass and a density"),
    ],
)
def test_bad_object_values_name_the_session_file(tmp_path, table, message):
    (tmp_path / "session.toml").write_text(f"[objects.box]\n{table}\n")
    with pytest.raises(InputError) as e:
        load_session(tmp_path)
    assert str(tmp_path / "session.toml") in str(e.value) and message in str(e.value), str(e.value)


def _box_scene() -> Scene:
    t = trimesh.transformations.translation_matrix([0, 0, 0.03])
    return Scene(Support(size=(0.5, 0.5)), (SceneObject("box", trimesh.creation.box((0.08, 0.06, 0.06)), t),))


def test_an_unknown_object_name_is_an_error_on_the_session_file(tmp_path):
    (tmp_path / "session.toml").write_text("[objects.boks]\nmass = 0.3\n")
    with pytest.raises(InputError) as e:
        check_object_names(load_session(tmp_path), _box_scene())
    msg = str(e.value)
    assert (
        "session.toml" in msg and "[objects.boks]: no object 'boks' in the scene (did you mean box?)" in msg
    )


def test_process_exports_the_sessions_object_values_with_their_sources(tmp_path):
    sess = tmp_path / "session"
    (sess / "lidar").mkdir(parents=True)
    (sess / "lidar" / "scan.ply").write_bytes(b"")  # a source, so the session has something to process
    (sess / "session.toml").write_text('[objects.box]\nmass = 0.321\nmaterial = "rubber"\n')
    out = tmp_path / "out"
    save_scene(_box_scene(), out / "scene")
    run_process(ProcessCfg(session_dir=sess, out_dir=out, stages=("export",), workers=1))
    objs = json.loads((out / "package" / "export.json").read_text())["objects"]
    ph = objs[0]["physics"]
    assert ph["mass"] == {"value": 0.321, "source": "weighed"}
    assert ph["friction"]["value"][0] == 0.9 and ph["friction"]["source"] == "material:rubber"
    readme = (out / "package" / "README.md").read_text()
    assert "| `box` | 0.321 | weighed |" in readme and "| 0.9 | material:rubber |" in readme
