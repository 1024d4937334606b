"""A new user's malformed inputs through the CLI: each is one ``error:`` line naming the file, exit 1, no traceback,
nothing written; scene mesh paths outside the scene folder (``..``, absolute, symlinks) are refused."""

from __future__ import annotations

import json
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
import trimesh
from click.testing import CliRunner

from real2sim.cli import cli
from real2sim.errors import InputError
from real2sim.scene import Scene, SceneObject, Support, load_scene, save_scene

PLY_HEAD = b"ply\nformat binary_little_endian 1.0\nelement vertex 100\nproperty float x\nproperty float y\n"
PCD_HEAD = b"VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH 2\nHEIGHT 1\nPOINTS 2\n"
SCANS = {
    "empty.ply": b"",
    "no_magic.ply": b"hello\nend_header\n",
    "truncated.ply": PLY_HEAD + b"property float z\nend_header\n" + bytes(40),
    "no_xyz.ply": PLY_HEAD.replace(b"100", b"1") + b"end_header\n" + bytes(8),
    "nan.ply": PLY_HEAD.replace(b"100", b"1") + b"property float z\nend_header\n" + b"\x00\x00\xc0\x7f" * 3,
    "no_data.pcd": PCD_HEAD,
    "bad_mode.pcd": PCD_HEAD + b"DATA zstd\n" + bytes(24),
    "lzf_size.pcd": PCD_HEAD + b"DATA binary_compressed\n" + struct.pack("<II", 2, 2**31) + b"\x00\x00",
    "ragged.xyz": b"0 0 0\n1 1\n",
    "one_d.npy": None,  # built below
    "text.npy": b"not an array",
    "velo.bin": bytes(15),
}


def _cases(tmp_path: Path, sample_data: Path) -> list[tuple[list[str], Path, Path]]:
    """(CLI arguments, the bad input, the output that must not appear)."""
    np.save(tmp_path / "one_d.npy", np.arange(5.0))
    cases = []
    for name, data in SCANS.items():
        if data is not None:
            (tmp_path / name).write_bytes(data)
        out = tmp_path / f"out_{name}"
        cases.append((["recon", "pointcloud", str(tmp_path / name), "-o", str(out)], tmp_path / name, out))
    (tmp_path / "adir.ply").mkdir()
    cases.append((["recon", "pointcloud", str(tmp_path / "adir.ply"), "-o", str(tmp_path / "o1")],
                  tmp_path / "adir.ply", tmp_path / "o1"))  # fmt: skip
    logs = sample_data / "logs"
    for name, text in {"ragged.csv": "time,q\n0,1\n1,2,3\n", "header_only.csv": "time,shoulder\n"}.items():
        (tmp_path / name).write_text(text)
        out = tmp_path / f"out_{name}"
        args = ["calibrate", str(sample_data / "robot" / "double_pendulum.xml"), "--log", str(tmp_path / name),
                "--map", str(logs / "map.toml"), "--fit", "joint:*.damping", "--no-report", "-o", str(out)]  # fmt: skip
        cases.append((args, tmp_path / name, out))
    (tmp_path / "bad.toml").write_text("[joints\nshoulder = 1\n")
    args = ["calibrate", str(sample_data / "robot" / "double_pendulum.xml"), "--log", str(logs / "excite_00.csv"),
            "--map", str(tmp_path / "bad.toml"), "--fit", "joint:*.damping", "--no-report", "-o", str(tmp_path / "o2")]  # fmt: skip
    cases.append((args, tmp_path / "bad.toml", tmp_path / "o2"))
    for name, mutate in {"json": lambda s: "{not json", "outside": None, "absolute": None}.items():
        scene = _scene(tmp_path / f"scene_{name}")
        doc = json.loads((scene / "scene.json").read_text())
        if name == "json":
            (scene / "scene.json").write_text(mutate(""))
        else:
            (tmp_path / "outside.ply").write_bytes((scene / "meshes" / "box.ply").read_bytes())
            doc["objects"][0]["mesh"] = (
                "../outside.ply" if name == "outside" else str(tmp_path / "outside.ply")
            )
            (scene / "scene.json").write_text(json.dumps(doc))
        out = tmp_path / f"pkg_{name}"
        cases.append((["export", str(scene), "-o", str(out)], scene / "scene.json", out))
    return cases


def _scene(folder: Path) -> Path:
    return save_scene(Scene(Support(), (SceneObject("box", trimesh.creation.box((0.1, 0.1, 0.1))),)), folder)


def test_the_bad_input_corpus_is_one_line_errors(tmp_path, sample_data):
    cases = _cases(tmp_path, sample_data)
    assert len(cases) >= 12
    runner = CliRunner()
    for args, bad, out in cases:
        before = sorted(p.name for p in tmp_path.iterdir())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = runner.invoke(cli, ["-q", *args])
        assert not caught, (args, [str(w.message) for w in caught])  # a warning is a second line on stderr
        lines = r.output.strip().splitlines()
        assert r.exit_code == 1 and len(lines) == 1 and lines[0].startswith("error: "), (args, r.output)
        assert str(bad) in lines[0] and "Traceback" not in r.output, (args, r.output)
        assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == before, args


def test_a_directory_is_called_a_directory(tmp_path):
    (tmp_path / "adir.ply").mkdir()
    r = CliRunner().invoke(
        cli, ["recon", "pointcloud", str(tmp_path / "adir.ply"), "-o", str(tmp_path / "o")]
    )
    assert r.exit_code == 1 and "is a directory" in r.output and "no such file" not in r.output


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink_file", "symlink_dir"])
def test_mesh_paths_outside_the_scene_folder_are_refused(how, tmp_path):
    scene = _scene(tmp_path / "scene")
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "m.ply").write_bytes((scene / "meshes" / "box.ply").read_bytes())
    doc = json.loads((scene / "scene.json").read_text())
    rel = {"dotdot": "../secret/m.ply", "absolute": str(secret / "m.ply")}.get(how, "meshes/link.ply")
    if how == "symlink_file":
        (scene / "meshes" / "link.ply").symlink_to(secret / "m.ply")
    elif how == "symlink_dir":
        (scene / "meshes" / "sub").symlink_to(secret)
        rel = "meshes/sub/m.ply"
    doc["objects"][0]["mesh"] = rel
    (scene / "scene.json").write_text(json.dumps(doc))
    with pytest.raises(InputError) as e:
        load_scene(scene)
    assert (
        str(e.value).startswith(str(scene / "scene.json"))
        and rel in str(e.value)
        and "\n" not in str(e.value)
    )


def test_a_symlink_inside_the_scene_folder_is_fine(tmp_path):
    scene = _scene(tmp_path / "scene")
    (scene / "meshes" / "alias.ply").symlink_to(scene / "meshes" / "box.ply")
    doc = json.loads((scene / "scene.json").read_text())
    doc["objects"][0]["mesh"] = "meshes/alias.ply"
    (scene / "scene.json").write_text(json.dumps(doc))
    assert len(load_scene(scene).objects[0].mesh.faces) == 12


def test_export_writes_only_inside_out_whatever_the_object_names(tmp_path):
    scene = _scene(tmp_path / "room")
    doc = json.loads((scene / "scene.json").read_text())
    pose = np.eye(4)
    pose[:3, 3] = [0.0, 0.0, 0.05]
    doc["objects"][0].update(name="../../evil", world_from_object=pose.tolist())
    pose[0, 3] = 0.3
    doc["objects"].append(dict(doc["objects"][0], name="/abs/x", world_from_object=pose.tolist()))
    (scene / "scene.json").write_text(json.dumps(doc))
    work = tmp_path / "work"
    work.mkdir()
    before = {p for p in tmp_path.rglob("*") if not p.is_relative_to(work)}
    r = CliRunner().invoke(
        cli, ["-q", "export", str(scene), "-o", str(work / "pkg"), "--workers", "1", "--no-cache"]
    )
    assert r.exit_code == 0, r.output
    after = {p for p in tmp_path.rglob("*") if not p.is_relative_to(work)}
    assert after == before and {p.name for p in work.iterdir()} == {"pkg"}


def test_saving_a_scene_never_writes_outside_its_folder(tmp_path):
    bad = Scene(Support(), (SceneObject("../../evil", trimesh.creation.box((0.1, 0.1, 0.1))),))
    with pytest.raises(ValueError, match="outside the scene folder"):
        save_scene(bad, tmp_path / "a" / "scene")
    assert list(tmp_path.rglob("*")) == []  # the parent made for it is removed too
