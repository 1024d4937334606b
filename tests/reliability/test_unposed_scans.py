"""Several scans without poses are registered to each other, or refused with one line saying poses are needed;
never stacked as if taken from one place. A fixed sensor's frames (one viewpoint) still merge."""

from __future__ import annotations

import json

import numpy as np
import trimesh
from click.testing import CliRunner

from real2sim.cli import cli


def test_the_sample_scans_without_poses_give_its_four_objects_or_one_error_line(tmp_path, sample_data):
    scans = [str(sample_data / "lidar" / f"scan_0{k}.ply") for k in range(3)]
    out = tmp_path / "scene"
    r = CliRunner().invoke(cli, ["-q", "recon", "pointcloud", *scans, "-o", str(out)])
    truth = json.loads((sample_data / "ground_truth.json").read_text())["objects"]
    if r.exit_code == 0:
        objs = json.loads((out / "scene.json").read_text())["objects"]
        assert len(objs) == len(truth) == 4, r.output
    else:
        lines = [ln for ln in r.output.splitlines() if ln.strip()]
        assert r.exit_code == 1 and len(lines) == 1 and lines[0].startswith("error: "), r.output
        assert "need poses" in lines[0] and "Traceback" not in r.output
        assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == []


def test_frames_of_a_fixed_sensor_merge(tmp_path, sample_data):
    """Two frames from one viewpoint (the same scan with 0.5 mm of independent noise) register to each other
    at the identity (within 5 mm and half a degree) and give the single frame's objects."""
    scan = trimesh.load(sample_data / "lidar" / "scan_00.ply", process=False)
    pts = np.asarray(scan.vertices)
    rng = np.random.default_rng(0)
    files = []
    for k in range(2):
        p = tmp_path / f"frame{k}.ply"
        trimesh.PointCloud(pts + rng.normal(0.0, 0.0005, pts.shape)).export(p)
        files.append(str(p))
    r = CliRunner().invoke(cli, ["-q", "recon", "pointcloud", *files, "-o", str(tmp_path / "two")])
    assert r.exit_code == 0, r.output
    one = CliRunner().invoke(cli, ["-q", "recon", "pointcloud", files[0], "-o", str(tmp_path / "one")])
    assert one.exit_code == 0, one.output
    two = json.loads((tmp_path / "two" / "scene.json").read_text())
    single = json.loads((tmp_path / "one" / "scene.json").read_text())
    w = {k: np.asarray(v) for k, v in two["world_from_input"].items()}
    rel = np.linalg.inv(w["frame0.ply"]) @ w["frame1.ply"]
    assert np.allclose(rel[:3, :3], np.eye(3), atol=1e-2) and np.linalg.norm(rel[:3, 3]) < 5e-3, rel
    # twice the samples of the same surfaces: the same objects, give or take a split of the sparser single frame
    assert abs(len(two["objects"]) - len(single["objects"])) <= 1
