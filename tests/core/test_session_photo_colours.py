"""A session with scans and photos: the photos colour the scans' object meshes. The sample session's scans,
stripped of their colour, with its 24 photos (marker scale): every object takes its true hue from the photos."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from real2sim.pipeline.process import ProcessCfg, run_process
from real2sim.recon.io import read_points
from real2sim.recon.io.pcd import write_pcd
from real2sim.scene import load_scene

pytestmark = pytest.mark.slow  # one scan reconstruction, SfM and dense points of 24 photos (~40 s on 2 cores)


def _chroma(rgb: np.ndarray) -> np.ndarray:
    """Colour without brightness (the photos are shaded, the truth is albedo)."""
    rgb = np.asarray(rgb, dtype=float)
    return rgb / rgb.sum(axis=-1, keepdims=True)


def test_photos_colour_uncoloured_scans(sample_data: Path, tmp_path: Path) -> None:
    s = tmp_path / "session"
    (s / "lidar").mkdir(parents=True)
    poses = json.loads((sample_data / "lidar" / "poses.json").read_text())
    for name in poses:
        c = read_points(sample_data / "lidar" / name)
        write_pcd(s / "lidar" / name.replace(".ply", ".pcd"), replace(c, colors=None))
    (s / "lidar" / "poses.json").write_text(
        json.dumps({k.replace(".ply", ".pcd"): v for k, v in poses.items()})
    )
    shutil.copytree(sample_data / "images", s / "images")
    (s / "session.toml").write_text(
        '[photos]\nmarker = { dictionary = "DICT_4X4_50", id = 0, size = 0.08 }\n'
    )
    res = run_process(ProcessCfg(session_dir=s, out_dir=tmp_path / "out", stages=("recon",)))
    assert any("photos colour" in n for n in res.notes)
    scene = load_scene(tmp_path / "out" / "scene")
    assert (tmp_path / "out" / "scene" / "point_labels.npy").is_file()
    assert "photo colours" in scene.provenance.steps
    truth = json.loads((sample_data / "ground_truth.json").read_text())["objects"]
    true_xy = np.array([np.asarray(t["world_from_object"])[:2, 3] for t in truth])
    assert len(scene.objects) == len(truth)
    for o in scene.objects:
        t = truth[int(np.argmin(np.linalg.norm(true_xy - o.world_from_object[:2, 3], axis=1)))]
        assert o.mesh.visual.kind == "vertex", o.name
        assert np.abs(_chroma(o.rgba[:3]) - _chroma(t["rgb"])).max() <= 0.03, (o.name, t["name"], o.rgba)
        side = (
            o.mesh_in_world().vertices[:, 2] >= 0.01
        )  # what the photos see (the underside takes the median)
        c = np.asarray(o.mesh.visual.vertex_colors)[side, :3] / 255.0 + 1e-3
        close = np.abs(_chroma(c) - _chroma(t["rgb"])).max(axis=1) <= 0.05
        assert close.mean() >= 0.75, (o.name, t["name"], close.mean())
