"""The sample session generator: determinism, and every ground-truth value checked against the generated data."""

from __future__ import annotations

import importlib.util
import json
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

from real2sim.errors import ConfigError
from real2sim.meshio import load_mesh
from real2sim.samplegen.generate import SampleGenCfg, generate, table_meshes

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("samplegen")
    a, b = base / "a", base / "b"
    generate(SampleGenCfg(out_dir=a, seed=0))
    generate(SampleGenCfg(out_dir=b, seed=0))
    return a, b


@pytest.fixture(scope="module")
def gt(runs: tuple[Path, Path]) -> dict:
    return json.loads((runs[0] / "ground_truth.json").read_text())


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def read_ply_xyzi(path: Path) -> tuple[np.ndarray, np.ndarray]:
    data = path.read_bytes()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode("ascii").splitlines()
    assert header[1] == "format binary_little_endian 1.0"
    n = int(next(h for h in header if h.startswith("element vertex")).split()[-1])
    props = [h.split()[1:] for h in header if h.startswith("property")]
    xyzi = [["float", "x"], ["float", "y"], ["float", "z"], ["float", "intensity"]]
    assert props == xyzi + [["uchar", c] for c in ("red", "green", "blue")]
    rec = np.frombuffer(data[end:], dtype=[("p", "<f4", 3), ("i", "<f4"), ("c", "u1", 3)], count=n)
    return rec["p"].astype(np.float64), rec["i"].astype(np.float64)


def _world_meshes(root: Path, gt: dict) -> list:
    table, floor = table_meshes()
    out = [table, floor]
    for o in gt["objects"]:
        m = load_mesh(root / o["mesh"])
        m.apply_transform(np.asarray(o["world_from_object"]))
        out.append(m)
    return out


def test_two_runs_give_identical_bytes(runs: tuple[Path, Path]) -> None:
    # Rendered images included: measured deterministic (MuJoCo offscreen on EGL renders the same pixels each run).
    fa, fb = _files(runs[0]), _files(runs[1])
    assert sorted(fa) == sorted(fb)
    differing = [k for k in fa if fa[k] != fb[k]]
    assert differing == []
    assert not any(p.name.startswith(".") for p in runs[0].parent.iterdir())  # no partial/old folders left


def test_layout_and_session_toml(runs: tuple[Path, Path], gt: dict) -> None:
    root = runs[0]
    session = tomllib.loads((root / "session.toml").read_text())
    assert session["session"]["name"] == "sample_tabletop"
    assert len(session["lidar"]["files"]) >= 2 and session["lidar"]["units"] == "m"
    for f in session["lidar"]["files"]:
        assert (root / f).is_file()
    poses = json.loads((root / session["lidar"]["poses"]).read_text())
    assert sorted(poses) == sorted(Path(f).name for f in session["lidar"]["files"])
    assert session["photos"]["marker"] == {"dictionary": "DICT_4X4_50", "id": 0, "size": 0.08}
    images = sorted((root / session["photos"]["dir"]).iterdir())
    assert len(images) >= 20 and len(images) == len(gt["images"])
    assert len(gt["objects"]) >= 4
    assert {o["kind"] for o in gt["objects"]} >= {"box", "cylinder", "mug", "stone"}
    has_robot = importlib.util.find_spec("real2sim.samplegen.robot") is not None
    assert ("robot" in gt) == has_robot == ("robot" in session)
    if has_robot:
        for f in [
            session["robot"]["model"],
            session["robot"]["map"],
            *session["robot"]["logs"],
            *session["robot"]["holdout"],
        ]:
            assert (root / f).is_file(), f
    size = sum(len(v) for v in _files(root).values())
    assert size <= 15e6, f"sample session is {size / 1e6:.1f} MB"


def test_true_meshes_watertight_and_masses_consistent(runs: tuple[Path, Path], gt: dict) -> None:
    for o in gt["objects"]:
        mesh = load_mesh(runs[0] / o["mesh"])
        assert mesh.is_watertight and mesh.is_winding_consistent and mesh.is_volume, o["name"]
        assert abs(mesh.volume - o["volume"]) <= 1e-12
        assert abs(mesh.volume * o["density"] - o["mass"]) <= 1e-9
        assert o["mass"] > 0.05


def _convex_polygon_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Distance between two disjoint convex polygons (CCW vertex arrays); 0 if they overlap."""
    from scipy.spatial import Delaunay

    if (Delaunay(a).find_simplex(b) >= 0).any() or (Delaunay(b).find_simplex(a) >= 0).any():
        return 0.0

    def pts_to_edges(p: np.ndarray, poly: np.ndarray) -> float:
        e0, e1 = poly, np.roll(poly, -1, axis=0)
        d = e1 - e0
        t = np.clip(np.einsum("pij,ij->pi", p[:, None] - e0[None], d) / np.einsum("ij,ij->i", d, d), 0, 1)
        closest = e0[None] + t[..., None] * d[None]
        return float(np.linalg.norm(p[:, None] - closest, axis=2).min())

    return min(pts_to_edges(a, b), pts_to_edges(b, a))


def test_objects_rest_on_table_apart(runs: tuple[Path, Path], gt: dict) -> None:
    from scipy.spatial import ConvexHull

    table_half = np.asarray(gt["table"]["size"][:2]) / 2
    meshes = _world_meshes(runs[0], gt)[2:]
    footprints = []
    for o, m in zip(gt["objects"], meshes, strict=True):
        assert abs(m.bounds[0, 2]) <= 1e-9, f"{o['name']} bottom at z={m.bounds[0, 2]}"
        assert (np.abs(m.vertices[:, :2]) < table_half).all()
        xy = m.vertices[:, :2]
        footprints.append(xy[ConvexHull(xy).vertices])
    marker = gt["marker"]
    W = np.asarray(marker["world_from_marker"])
    s = marker["sheet_size"] / 2
    sheet = (np.array([[-s, -s, 0, 1], [s, -s, 0, 1], [s, s, 0, 1], [-s, s, 0, 1]]) @ W.T)[:, :2]
    footprints.append(sheet)
    # The xy projection never increases distances, so footprint gaps bound the 3D gaps from below.
    for i in range(len(footprints)):
        for j in range(i + 1, len(footprints)):
            gap = _convex_polygon_distance(footprints[i], footprints[j])
            assert gap >= 0.05, f"footprints {i} and {j} only {gap:.4f} m apart"


def test_scan_points_lie_on_true_surfaces(runs: tuple[Path, Path], gt: dict) -> None:
    import open3d as o3d

    root = runs[0]
    meshes = _world_meshes(root, gt)
    scene = o3d.t.geometry.RaycastingScene()
    for m in meshes:
        scene.add_triangles(
            o3d.core.Tensor(m.vertices.astype(np.float32)), o3d.core.Tensor(m.faces.astype(np.uint32))
        )
    poses = json.loads((root / "lidar" / "poses.json").read_text())
    seen_by = {o["name"]: 0 for o in gt["objects"]}
    table_half = np.asarray(gt["table"]["size"][:2]) / 2
    for s in gt["lidar"]:
        sigma = s["noise_sigma"]
        assert 0.001 <= sigma <= 0.003
        pts, inten = read_ply_xyzi(root / s["file"])
        assert len(pts) == s["n_points"] > 20000
        assert np.all((inten >= 0) & (inten <= 1))
        T = np.asarray(poses[Path(s["file"]).name])
        assert np.allclose(T, s["world_from_sensor"]) and T[2, 3] > 0.2  # sensors above the table
        assert np.all(pts[:, 2] > 0)  # OpenCV sensor frame: every return lies in front (z forward)
        w = pts @ T[:3, :3].T + T[:3, 3]
        q = scene.compute_closest_points(o3d.core.Tensor(w.astype(np.float32)))
        closest = q["points"].numpy().astype(np.float64)
        dist = np.linalg.norm(w - closest, axis=1)
        assert dist.max() <= 6 * sigma, f"{s['file']}: point {dist.max() * 1e3:.2f} mm off the true surfaces"
        rms = float(np.sqrt(np.mean(dist**2)))
        assert 0.3 * sigma <= rms <= 1.05 * sigma, (
            f"{s['file']}: rms {rms * 1e3:.3f} mm vs sigma {sigma * 1e3} mm"
        )
        labels = np.load(root / s["labels"])
        geom = q["geometry_ids"].numpy().astype(np.int64)
        expected = np.array([0, -1] + list(range(1, len(gt["objects"]) + 1)))[geom]
        assert np.mean(labels == expected) >= 0.99
        # Nothing sees an object's underside: every return came along a downward ray from above the table, so no
        # downward-facing resting face (n_z = -1, pressed on the table) can face the sensor.
        assert np.all(w[:, 2] - T[2, 3] < 0)
        on_obj = labels >= 1
        assert np.all(w[on_obj, 2] >= -6 * sigma)
        # The table is only partly visible: the scan's table points cover well under the whole table top.
        tab = w[labels == 0]
        cells = np.unique(np.floor((tab[:, :2] + table_half) / 0.02).astype(int), axis=0)
        covered = len(cells) * 0.02**2 / (4 * table_half[0] * table_half[1])
        assert covered < 0.9, f"{s['file']}: table {covered:.0%} covered"
        for k, o in enumerate(gt["objects"], start=1):
            seen_by[o["name"]] += int(np.sum(labels == k) >= 200)
    assert all(v >= 2 for v in seen_by.values()), seen_by


def test_photos_project_the_marker_where_aruco_finds_it(runs: tuple[Path, Path], gt: dict) -> None:
    import cv2

    marker = gt["marker"]
    W = np.asarray(marker["world_from_marker"])
    h = marker["size"] / 2
    corners_m = np.array([[-h, h, 0], [h, h, 0], [h, -h, 0], [-h, -h, 0]])
    corners_w = corners_m @ W[:3, :3].T + W[:3, 3]
    assert np.allclose(corners_w, marker["corners_world"], atol=1e-12)
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    det = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), params)
    detected, errors = 0, []
    for im in gt["images"]:
        img = cv2.imread(str(runs[0] / im["file"]), cv2.IMREAD_GRAYSCALE)
        assert img.shape == (im["height"], im["width"]) == (480, 640)
        corners, ids, _ = det.detectMarkers(img)
        if ids is None:
            continue
        assert ids.ravel().tolist() == [0]  # the right dictionary and id, not mirrored
        K = np.array([[im["fx"], 0, im["cx"]], [0, im["fy"], im["cy"]], [0, 0, 1]])
        C = np.asarray(im["cam_from_world"])
        pc = corners_w @ C[:3, :3].T + C[:3, 3]
        assert np.all(pc[:, 2] > 0)
        uv = pc @ K.T
        uv = uv[:, :2] / uv[:, 2:]
        errors.append(float(np.linalg.norm(corners[0][0] - uv, axis=1).max()))
        detected += 1
    assert detected >= 0.8 * len(gt["images"]), f"marker found in {detected}/{len(gt['images'])} photos"
    assert max(errors) <= 2.0, f"corner reprojection error up to {max(errors):.2f} px"


def test_photos_have_texture_for_sift(runs: tuple[Path, Path], gt: dict) -> None:
    import cv2

    sift = cv2.SIFT_create()
    for im in (gt["images"][0], gt["images"][len(gt["images"]) // 2]):
        img = cv2.imread(str(runs[0] / im["file"]), cv2.IMREAD_GRAYSCALE)
        assert len(sift.detect(img)) >= 2000


def _assert_json_close(a: object, b: object, where: str = "") -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), where
        for k in a:
            _assert_json_close(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _assert_json_close(x, y, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {a} != {b}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def test_committed_sample_data_matches_generator(runs: tuple[Path, Path], sample_data: Path) -> None:
    # JSON compared with a 1e-9 relative tolerance: last-bit differences of libm across CPUs are not a change.
    committed = json.loads((sample_data / "ground_truth.json").read_text())
    fresh = json.loads((runs[0] / "ground_truth.json").read_text())
    _assert_json_close(fresh, committed, "ground_truth")
    assert (sample_data / "session.toml").read_text() == (runs[0] / "session.toml").read_text()
    assert sorted(p.name for p in (sample_data / "images").iterdir()) == sorted(
        p.name for p in (runs[0] / "images").iterdir()
    )


def test_bad_config_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="n_scans"):
        generate(SampleGenCfg(out_dir=tmp_path / "x", n_scans=1))
    with pytest.raises(ConfigError, match="seed"):
        generate(SampleGenCfg(out_dir=tmp_path / "x", seed=-1))
    assert not (tmp_path / "x").exists()
