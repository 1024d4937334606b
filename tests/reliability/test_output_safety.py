"""``-o`` never destroys what real2sim did not write; outputs follow the umask; stale partial folders go away.

Every command that writes (recon pointcloud / photos / splat, export, calibrate, process, demo) is run through the
CLI against a folder holding a user's file: one ``error:`` line naming the folder and ``--overwrite``, exit 1, the
file intact, nothing else written. Inputs, folders holding inputs, the current folder, its parents, home and ``/``
are refused even with ``--overwrite``.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import trimesh
from click.testing import CliRunner

from real2sim.atomic import output_dir, remove_stale_partials, write_text
from real2sim.cli import cli
from real2sim.errors import InputError
from real2sim.outguard import MARKER, check_output
from real2sim.scene import Scene, SceneObject, Support, save_scene

ROOT = Path(__file__).resolve().parents[2]


def _commands(sample: Path, scene: Path, out: Path) -> dict[str, list[str]]:
    robot = ["--map", str(sample / "logs" / "map.toml"), "--fit", "joint:*.damping", "--no-report"]
    return {
        "recon pointcloud": ["recon", "pointcloud", str(sample / "lidar" / "scan_00.ply"), "-o", str(out)],
        "recon photos": ["recon", "photos", str(sample / "images"), "-o", str(out)],
        "recon splat": ["recon", "splat", str(sample / "lidar" / "scan_00.ply"), "-o", str(out)],
        "export": ["export", str(scene), "-o", str(out)],
        "calibrate": [
            "calibrate",
            str(sample / "robot" / "double_pendulum.xml"),
            "--log",
            str(sample / "logs" / "excite_00.csv"),
            *robot,
            "-o",
            str(out),
        ],  # fmt: skip
        "process": ["process", str(sample), "-o", str(out)],
        "demo": ["demo", "--sample", str(sample), "-o", str(out)],
    }


def _box_scene(folder: Path) -> Path:
    return save_scene(Scene(Support(), (SceneObject("box", trimesh.creation.box((0.1, 0.1, 0.1))),)), folder)


def _tree(root: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else None for p in sorted(root.rglob("*"))
    }


def _one_error(r, *words: str) -> None:
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert r.exit_code == 1 and len(lines) == 1 and lines[0].startswith("error: "), r.output
    assert "Traceback" not in r.output and all(w in lines[0] for w in words), r.output


@pytest.mark.parametrize("command", list(_commands(Path(), Path(), Path())))
def test_a_folder_holding_a_user_file_is_refused(tmp_path, sample_data, command):
    scene = _box_scene(tmp_path / "scene")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes")
    before = _tree(tmp_path)
    r = CliRunner().invoke(cli, _commands(sample_data, scene, mine)[command])
    _one_error(r, str(mine), "notes.txt", "--overwrite")
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("command", ["recon pointcloud", "export", "process"])
def test_an_input_or_a_folder_holding_one_is_refused_even_with_overwrite(tmp_path, sample_data, command):
    import shutil

    sample = tmp_path / "sample"
    shutil.copytree(sample_data, sample)
    scene = _box_scene(tmp_path / "scene")
    src = {"recon pointcloud": sample / "lidar" / "scan_00.ply", "export": scene, "process": sample}[command]
    before = _tree(tmp_path)
    for out, why in ((src, "is an input"), (src.parent, "holds the input"), (tmp_path, "holds the input")):
        r = CliRunner().invoke(cli, [*_commands(sample, scene, out)[command], "--overwrite"])
        _one_error(r, str(out), why)
    assert _tree(tmp_path) == before


def test_current_parent_home_and_root_are_refused_even_with_overwrite(tmp_path, monkeypatch):
    scene = _box_scene(tmp_path / "scene")
    work = tmp_path / "home" / "work"
    work.mkdir(parents=True)
    (work / "notes.txt").write_text("x")
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    before = _tree(tmp_path)
    for out, why in ((".", "is the current folder"), ("..", "holds the current folder"),
                     ("~", "holds the current folder"), ("/", "root folder"), (str(tmp_path / "home"), "holds the current folder")):  # fmt: skip
        r = CliRunner().invoke(cli, ["export", str(scene), "-o", out, "--overwrite"])
        _one_error(r, why)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["export", str(scene), "-o", str(tmp_path / "home"), "--overwrite"])
    _one_error(r, "is your home folder")
    assert _tree(tmp_path) == before


def test_paths_that_cannot_be_an_output_folder(tmp_path):
    (tmp_path / "file.txt").write_text("x")
    for out, why in (
        (tmp_path / "file.txt", "is a file, not a folder"),
        (tmp_path / "file.txt" / "pkg", f"is under {tmp_path / 'file.txt'}, a file"),
        (tmp_path / ("a" * 300), "path too long"),
        (tmp_path / "/".join(["b" * 200] * 25), "path too long"),
    ):
        with pytest.raises(InputError) as e:
            check_output(out, overwrite=True)
        assert why in str(e.value) and str(e.value).startswith(str(out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_long_names_and_new_parents(tmp_path):
    out = tmp_path / "x" / "y" / ("n" * 250)
    with output_dir(out) as tmp:
        write_text(tmp / "a.txt", "1")
    assert (out / "a.txt").read_text() == "1" and sorted(os.listdir(out.parent)) == [out.name]
    failed = tmp_path / "p" / "q" / "pkg"
    with pytest.raises(RuntimeError), output_dir(failed) as tmp:
        write_text(tmp / "a.txt", "1")
        raise RuntimeError("stage failed")
    assert not (tmp_path / "p").exists()  # the parents made for a failed run are removed too


def test_own_output_is_replaced_and_marked_but_not_once_a_user_adds_to_it(tmp_path):
    out = tmp_path / "pkg"
    for text in ("1", "2"):
        with output_dir(out) as tmp:
            write_text(tmp / "a.txt", text)
            (tmp / "sub").mkdir()
    assert (out / "a.txt").read_text() == "2" and sorted(os.listdir(out)) == [MARKER, "a.txt", "sub"]
    (out / "mine.txt").write_text("keep")
    with pytest.raises(InputError, match="mine.txt"), output_dir(out) as tmp:
        write_text(tmp / "a.txt", "3")
    assert (out / "mine.txt").read_text() == "keep" and (out / "a.txt").read_text() == "2"
    with output_dir(out, overwrite=True) as tmp:
        write_text(tmp / "a.txt", "4")
    assert sorted(os.listdir(out)) == [MARKER, "a.txt"]
    assert sorted(os.listdir(tmp_path)) == ["pkg"]  # no partial, old or lock files left


def test_a_user_file_arriving_during_the_run_stops_the_replace(tmp_path):
    out = tmp_path / "pkg"
    with output_dir(out) as tmp:
        write_text(tmp / "a.txt", "1")
    with pytest.raises(InputError, match="late.txt"), output_dir(out) as tmp:
        write_text(tmp / "a.txt", "2")
        (out / "late.txt").write_text("mine")
    assert (out / "late.txt").read_text() == "mine" and (out / "a.txt").read_text() == "1"


def test_rerun_into_its_own_output_needs_no_flag(tmp_path, sample_data):
    out = tmp_path / "scene"
    args = ["-q", "recon", "pointcloud", str(sample_data / "lidar" / "scan_00.ply"), "-o", str(out)]
    for _ in range(2):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 0, r.output
    assert (out / "scene.json").is_file() and (out / MARKER).is_file()
    assert sorted(os.listdir(tmp_path)) == ["scene"]


def test_stale_partials_are_removed_live_ones_kept(tmp_path):
    out = tmp_path / "pkg"
    stale = tmp_path / ".pkg.partial-dead0000"
    stale.mkdir()
    (stale / "half.xml").write_text("<")
    (tmp_path / ".pkg.partial-dead0000.lock").write_text("")
    unlocked = tmp_path / ".pkg.partial-nolock00"  # killed before its lock was made
    unlocked.mkdir()
    live = tmp_path / ".pkg.partial-live0000"
    live.mkdir()
    lock = tmp_path / ".pkg.partial-live0000.lock"
    lock.write_text("")
    other = tmp_path / ".other.partial-dead0000"  # another output's: not ours to judge
    other.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl,sys,time; f=open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); "
         "print('held', flush=True); time.sleep(60)", str(lock)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with output_dir(out) as tmp:
            write_text(tmp / "a.txt", "1")
        names = sorted(os.listdir(tmp_path))
        assert names == sorted([".other.partial-dead0000", ".pkg.partial-live0000", lock.name, "pkg"])
    finally:
        holder.kill()
        holder.wait()
    assert remove_stale_partials(out) == [live] and not lock.exists()  # its holder is gone: now it is stale


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_outputs_follow_the_umask(tmp_path, umask):
    code = (
        "import os, sys, trimesh\n"
        f"os.umask({umask})\n"
        "from real2sim.scene import Scene, SceneObject, Support, save_scene\n"
        "save_scene(Scene(Support(), (SceneObject('box', trimesh.creation.box((0.1, 0.1, 0.1))),)), sys.argv[1])\n"
    )
    out = tmp_path / "new" / "scene"
    subprocess.run([sys.executable, "-c", code, str(out)], cwd=ROOT, check=True)
    for p in [tmp_path / "new", out, *out.rglob("*")]:
        mode = stat.S_IMODE(p.stat().st_mode)
        want = (0o777 if p.is_dir() else 0o666) & ~umask
        assert mode == want, (p, oct(mode), oct(want))
