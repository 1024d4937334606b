"""Scans too large to hold: voxel downsampling while reading in chunks (``recon/pointcloud/voxel.py``), per-point labels
mapped back from the voxels, and the one-line stop before memory runs out. Small ray-cast scans stand in for the
20-100M-point ones (``benchmarks/bench_large_scan.py`` measures those)."""

from __future__ import annotations

import re
import tracemalloc

import numpy as np
import pytest
from click.testing import CliRunner

import real2sim.recon.pointcloud.voxel as voxel
from real2sim.cli import cli
from real2sim.errors import InputError
from real2sim.recon.io import read_points
from real2sim.recon.pointcloud.run import PointCloudReconCfg, run_recon_pointcloud
from tests.helpers.large_scan import write_tabletop_ply


@pytest.fixture(scope="module")
def scan(tmp_path_factory):
    path = tmp_path_factory.mktemp("large") / "tabletop.ply"
    write_tabletop_ply(path, 120_000)
    return path


@pytest.fixture
def streamed(monkeypatch):
    """Make every file "large": downsampled while read, in chunks of 25,000 points."""
    monkeypatch.setattr(voxel, "STREAM_POINTS", 1000)
    monkeypatch.setattr(voxel, "CHUNK", 25_000)


def test_chunked_voxels_are_the_in_memory_voxels(scan, streamed):
    cloud = read_points(scan)
    vc = voxel.read_scan(scan, "m", 0.004)
    assert isinstance(vc, voxel.VoxelCloud)
    rows = vc.point_labels(np.arange(len(vc)))
    # the same grouping, in order of first appearance, as one np.unique over all the points
    keys = np.floor((cloud.points - vc.grid.lo) / 0.004).astype(np.int64)
    _, first, inv = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    assert np.array_equal(rows, rank[inv.reshape(-1)])
    means = np.stack([np.bincount(rows, weights=cloud.points[:, j]) for j in range(3)], axis=1)
    np.testing.assert_allclose(vc.points, means / np.bincount(rows)[:, None], atol=1e-12)


def test_invalid_points_get_label_minus_one_and_colours_are_averaged(tmp_path, streamed):
    pts = np.array([[0, 0, 0], [0.0001, 0, 0], [np.nan, 0, 0], [1, 1, 1]] * 600, dtype="<f4")
    rgb = np.array([[255, 0, 0], [0, 0, 255], [0, 0, 0], [0, 255, 0]] * 600, dtype="u1")
    rec = np.empty(len(pts), dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("red", "u1"), ("green", "u1"), ("blue", "u1")])  # fmt: skip
    for i, k in enumerate("xyz"):
        rec[k] = pts[:, i]
    rec["red"], rec["green"], rec["blue"] = rgb.T
    head = f"ply\nformat binary_little_endian 1.0\nelement vertex {len(rec)}\n"
    head += "".join(f"property {t} {k}\n" for t, k in [("float", "x"), ("float", "y"), ("float", "z"),
                                                      ("uchar", "red"), ("uchar", "green"), ("uchar", "blue")])  # fmt: skip
    path = tmp_path / "rgb.ply"
    path.write_bytes((head + "end_header\n").encode() + rec.tobytes())
    vc = voxel.read_scan(path, "m", 0.01)
    assert len(vc) == 2
    np.testing.assert_allclose(vc.colors, [[0.5, 0, 0.5], [0, 1, 0]])
    labels = vc.point_labels(np.array([7, 9]))
    assert labels.dtype == np.int32 and len(labels) == len(pts)
    assert labels[:4].tolist() == [7, 7, -1, 9]


def test_reconstruction_of_a_streamed_scan_finds_the_same_objects(scan, tmp_path, monkeypatch):
    cfg = PointCloudReconCfg(inputs=(scan,), out_dir=tmp_path / "full", save_point_labels=True)
    full = run_recon_pointcloud(cfg)
    monkeypatch.setattr(voxel, "STREAM_POINTS", 1000)
    monkeypatch.setattr(voxel, "CHUNK", 25_000)
    out = run_recon_pointcloud(PointCloudReconCfg(inputs=(scan,), out_dir=tmp_path / "streamed", save_point_labels=True))  # fmt: skip
    assert len(out.scene.objects) == len(full.scene.objects) == 4
    saved = np.load(tmp_path / "streamed" / "point_labels.npy")
    assert saved.dtype == np.int32 and np.array_equal(saved, out.point_labels)
    assert len(saved) == len(full.point_labels)
    assert np.mean(saved == full.point_labels) > 0.97
    for a, b in zip(full.scene.objects, out.scene.objects, strict=True):
        assert abs(a.mesh.volume - b.mesh.volume) < 0.05 * a.mesh.volume


def _peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_grows_with_the_voxels_not_the_points(scan, tmp_path, streamed):
    """Two and eight copies of the scan in one file: 4x the points, the same voxels. Reading whole costs at least
    the float64 points (24 bytes) per extra point; the chunked reduction each point's int32 voxel row and its
    chunk's voxel keys (at most 8 bytes a point; far fewer in a dense scan, where a chunk's points share voxels)."""
    head, body = scan.read_bytes().split(b"end_header\n", 1)
    n = len(body) // 12
    files = {}
    for k in (2, 8):
        files[k] = tmp_path / f"copies{k}.ply"
        files[k].write_bytes(re.sub(rb"element vertex \d+", b"element vertex %d" % (k * n), head) + b"end_header\n" + body * k)  # fmt: skip
    whole = {k: _peak_bytes(lambda f=f: read_points(f)) for k, f in files.items()}
    chunked = {k: _peak_bytes(lambda f=f: voxel.read_scan(f, "m", 0.002)) for k, f in files.items()}
    extra = 6 * n
    assert (whole[8] - whole[2]) / extra >= 24
    assert (chunked[8] - chunked[2]) / extra <= 14
    assert chunked[8] - chunked[2] < 0.2 * (whole[8] - whole[2])


def test_a_scan_over_the_memory_budget_stops_with_one_line(scan, tmp_path, streamed, monkeypatch):
    monkeypatch.setenv(voxel.MAX_MEMORY_VAR, "0.01")
    with pytest.raises(InputError, match="too large for the memory available"):
        voxel.read_scan(scan, "m", 0.001)
    out = tmp_path / "scene"
    r = CliRunner().invoke(cli, ["recon", "pointcloud", str(scan), "-o", str(out)])
    assert r.exit_code == 1
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "tabletop.ply" in lines[0]
    assert not out.exists()
