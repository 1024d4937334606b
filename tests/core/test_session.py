import pytest

from real2sim.errors import InputError
from real2sim.pipeline.session import load_session


def _touch(p, data=b"x"):
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return p


def test_discovers_folders_without_toml(tmp_path):
    _touch(tmp_path / "lidar" / "b.pcd")
    _touch(tmp_path / "lidar" / "a.ply")
    _touch(tmp_path / "lidar" / "notes.md")
    _touch(tmp_path / "images" / "0001.jpg")
    _touch(tmp_path / "splats" / "cat.ply")
    s = load_session(tmp_path)
    assert [p.name for p in s.lidar] == ["a.ply", "b.pcd"]
    assert s.images == tmp_path / "images" and [p.name for p in s.splats] == ["cat.ply"]
    assert s.sources == ("lidar", "photos", "splats") and s.robot is None and s.name == tmp_path.name


def test_reads_session_toml(tmp_path):
    for rel in (
        "lidar/s0.ply",
        "lidar/poses.json",
        "images/a.png",
        "images/distance.toml",
        "robot/arm.xml",
        "logs/map.toml",
    ):
        _touch(tmp_path / rel)
    for i in range(3):
        _touch(tmp_path / "logs" / f"r{i}.csv")
    (tmp_path / "session.toml").write_text(
        """
[session]
name = "bench"
[lidar]
files = ["lidar/s0.ply"]
poses = "lidar/poses.json"
units = "mm"
[photos]
dir = "images"
marker = { dictionary = "DICT_4X4_50", id = 3, size = 0.05 }
known_distance = "images/distance.toml"
[objects]
density = 800.0
[robot]
model = "robot/arm.xml"
map = "logs/map.toml"
logs = ["logs/r0.csv", "logs/r1.csv"]
holdout = ["logs/r2.csv"]
fit = ["joint:*.damping"]
"""
    )
    s = load_session(tmp_path)
    assert s.name == "bench" and s.lidar_units == "mm" and s.density == 800.0
    assert s.marker is not None and s.marker.id == 3 and s.marker.size == 0.05
    assert s.known_distance == tmp_path / "images" / "distance.toml"
    assert s.robot is not None and [p.name for p in s.robot.holdout] == ["r2.csv"]
    assert s.robot.fit == ("joint:*.damping",) and s.sources == ("lidar", "photos", "robot")


@pytest.mark.parametrize(
    "toml, message",
    [
        ('[lidar]\nfiles = ["lidar/missing.ply"]\n', "lidar file 'lidar/missing.ply' does not exist"),
        ('[lidar]\nunits = "furlong"\n', "units must be m, cm or mm"),
        ("[photos\n", "malformed TOML"),
        ('[photos]\ndir = "."\nmarker = { size = -1 }\n', "marker.size must be > 0"),
        ('[robot]\nmodel = "."\n', "invalid session: 'map'"),
        ('[photos]\nknown_distance = "d.toml"\n', "known-distance file 'd.toml' does not exist"),
    ],
)
def test_bad_session_toml_names_file(tmp_path, toml, message):
    (tmp_path / "session.toml").write_text(toml)
    with pytest.raises(InputError) as e:
        load_session(tmp_path)
    assert str(tmp_path / "session.toml") in str(e.value) and message in str(e.value)


def test_missing_folder(tmp_path):
    with pytest.raises(InputError, match="no such session folder"):
        load_session(tmp_path / "nope")
