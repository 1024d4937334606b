"""The red-team corpus as a table: each case builds its bad input in its own folder and says what the user must see.

A case is ``Case(id, build, expect)``: ``build(folder, base)`` writes the inputs into ``folder`` (the working folder of
the command) and returns the command line; ``expect`` is the text the single ``error:`` line must contain (the file or
option at fault and the problem), or ``None`` for a run that must succeed. ``base`` holds what several cases start
from (a scan, a scene, an exported package, the sample logs). ``run_corpus`` runs every case through
``cli_runner`` (a forked ``real2sim`` per case, stdout and stderr at the descriptor, an address-space cap and a time
limit) and returns the problems found, one string per broken rule.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
Build = Callable[[Path, dict[str, Path]], list[str]]


@dataclass(frozen=True)
class Case:
    id: str
    build: Build
    expect: tuple[str, ...] | None
    """Substrings of the one ``error:`` line (None: the run must succeed); ``rc`` is its exit code."""
    rc: int = 1
    warns: tuple[str, ...] = ()
    """Substrings of the warning a successful run must print (accepted, but not without a word)."""
    fsize: int | None = None
    """Largest file [bytes] the command may write (a disk that fills up)."""


# ---------------------------------------------------------------- builders


def _pcd(points: int, extra: str = "", width: int | None = None) -> bytes:
    head = (
        f"VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH {width or points}\nHEIGHT 1\n"
        f"{extra}POINTS {points}\nDATA ascii\n"
    )
    rng = np.random.default_rng(0)
    body = "\n".join(" ".join(f"{v:.4f}" for v in p) for p in rng.uniform(0, 1, (points, 3)))
    return (head + body + "\n").encode()


def _scan(name: str, data: bytes | Callable[[Path], None], *opts: str) -> Build:
    def build(d: Path, base: dict[str, Path]) -> list[str]:
        if callable(data):
            data(d / name)
        else:
            (d / name).write_bytes(data)
        return ["recon", "pointcloud", name, *opts, "-o", "out"]

    return build


def _sample_scan(*opts: str) -> Build:
    def build(d: Path, base: dict[str, Path]) -> list[str]:
        return ["recon", "pointcloud", str(base["scan"]), *opts, "-o", "out"]

    return build


def _poses(pose: list[list[float]]) -> Build:
    """The sample scan with a poses file giving it ``pose``."""

    def build(d: Path, base: dict[str, Path]) -> list[str]:
        (d / "poses.json").write_text(json.dumps({base["scan"].name: pose}))
        return ["recon", "pointcloud", str(base["scan"]), "--poses", "poses.json", "-o", "out"]

    return build


def _npy(arr: np.ndarray) -> Callable[[Path], None]:
    return lambda p: np.save(p, arr)


def _cloud_file(points: np.ndarray) -> Callable[[Path], None]:
    return lambda p: p.write_text("\n".join(" ".join(f"{v:.5f}" for v in q) for q in points) + "\n")


def _scene(edit: Callable[[dict], None] | None = None, raw: str | None = None, *opts: str) -> Build:
    """The base box scene copied into ``scene/`` with ``edit`` applied to its scene.json (or ``raw`` text)."""

    def build(d: Path, base: dict[str, Path]) -> list[str]:
        shutil.copytree(base["scene"], d / "scene")
        js = d / "scene" / "scene.json"
        if raw is not None:
            js.write_text(raw)
        elif edit is not None:
            doc = json.loads(js.read_text())
            edit(doc)
            js.write_text(json.dumps(doc))
        return ["export", "scene", "-o", "out", "--workers", "1", "--no-cache", *opts]

    return build


def _obj(**kw: object) -> Callable[[dict], None]:
    return lambda doc: doc["objects"][0].update(kw)


def _support(**kw: object) -> Callable[[dict], None]:
    return lambda doc: doc["support"].update(kw)


def _pose(m: list[list[float]]) -> Callable[[dict], None]:
    return _obj(world_from_object=m)


def _tiny_scene(d: Path, base: dict[str, Path]) -> list[str]:
    """The box scaled to 1 µm."""
    import trimesh

    args = _scene()(d, base)
    trimesh.creation.box((1e-6, 1e-6, 1e-6)).export(d / "scene" / "meshes" / "box.ply")
    return args


def _mesh_bytes(data: bytes) -> Build:
    """The base scene with its mesh file replaced by ``data``."""

    def build(d: Path, base: dict[str, Path]) -> list[str]:
        args = _scene()(d, base)
        (d / "scene" / "meshes" / "box.ply").write_bytes(data)
        return args

    return build


def _mesh_obj(make: Callable) -> Build:
    """The base scene with its mesh replaced by ``make(trimesh)``."""

    def build(d: Path, base: dict[str, Path]) -> list[str]:
        import trimesh

        args = _scene()(d, base)
        make(trimesh).export(d / "scene" / "meshes" / "box.ply")
        return args

    return build


def _package(edit: Callable[[str], str], *opts: str) -> Build:
    """The base package copied into ``pkg/`` with ``edit`` applied to its model XML."""

    def build(d: Path, base: dict[str, Path]) -> list[str]:
        shutil.copytree(base["package"], d / "pkg")
        xml = d / "pkg" / "box.xml"
        xml.write_text(edit(xml.read_text()))
        return ["validate", "pkg", *opts]

    return build


def _package_file(name: str, text: str) -> Build:
    """The base package copied into ``pkg/`` with its file ``name`` replaced by ``text``."""

    def build(d: Path, base: dict[str, Path]) -> list[str]:
        shutil.copytree(base["package"], d / "pkg")
        (d / "pkg" / name).write_text(text)
        return ["validate", "pkg"]

    return build


def _calibrate(log: Callable[[Path], str] | None = None, *opts: str, map_text: str | None = None) -> Build:
    """Calibrate the sample pendulum; ``log(folder)`` writes the training log and returns its name."""

    def build(d: Path, base: dict[str, Path]) -> list[str]:
        name = log(d) if log else str(SAMPLE / "logs" / "excite_00.csv")
        mp = SAMPLE / "logs" / "map.toml"
        if map_text is not None:
            (d / "map.toml").write_text(map_text)
            mp = d / "map.toml"
        args = ["calibrate", str(SAMPLE / "robot" / "double_pendulum.xml"), "--log", name, "--map", str(mp)]
        return [*args, "--fit", "joint:*.damping", "--no-report", "--max-windows", "4", *opts, "-o", "out"]

    return build


def _sample_rows() -> tuple[list[str], np.ndarray]:
    lines = (SAMPLE / "logs" / "excite_00.csv").read_text().splitlines()
    return lines[0].split(","), np.array([[float(v) for v in ln.split(",")] for ln in lines[1:]])


def _csv_log(name: str, transform: Callable[[list[str], np.ndarray], bytes]) -> Callable[[Path], str]:
    def write(d: Path) -> str:
        header, rows = _sample_rows()
        (d / name).write_bytes(transform(header, rows))
        return name

    return write


def _csv_bytes(header: list[str], rows: np.ndarray) -> bytes:
    return (
        ",".join(header) + "\n" + "\n".join(",".join(repr(float(v)) for v in r) for r in rows) + "\n"
    ).encode()


def _gap(header: list[str], rows: np.ndarray) -> bytes:
    rows = rows.copy()
    rows[len(rows) // 2 :, 0] += 100.0  # one 100 s gap in the middle
    return _csv_bytes(header, rows)


def _ms(header: list[str], rows: np.ndarray) -> bytes:
    rows = rows.copy()
    rows[:, 0] *= 1000.0
    return _csv_bytes(header, rows)


def _gzip_bomb(header: list[str], rows: np.ndarray) -> bytes:
    """A few MB of gzip that inflates to 3 GB of CSV rows (repeats of one row)."""
    row = (",".join(repr(float(v)) for v in rows[0]) + "\n").encode()
    head = (",".join(header) + "\n").encode()
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [comp.compress(head)]
    chunk = row * (2**20 // len(row))
    for _ in range(3 * 1024):
        parts.append(comp.compress(chunk))
    parts.append(comp.flush())
    return b"".join(parts)


def _npz_unequal(d: Path) -> str:
    np.savez(d / "log.npz", time=np.arange(10) * 0.01, q_shoulder=np.zeros(7), q_elbow=np.zeros(10))
    return "log.npz"


def _h5_unequal(d: Path) -> str:
    import h5py

    with h5py.File(d / "log.h5", "w") as f:
        f["time"] = np.arange(10) * 0.01
        f["q_shoulder"] = np.zeros(7)
        f["q_elbow"] = np.zeros(10)
    return "log.h5"


def _photos(write: Callable[[Path], None], *opts: str) -> Build:
    def build(d: Path, base: dict[str, Path]) -> list[str]:
        (d / "imgs").mkdir()
        write(d / "imgs")
        return ["recon", "photos", "imgs", *opts, "-o", "out"]

    return build


def _sample_photos(*opts: str) -> Build:
    def build(d: Path, base: dict[str, Path]) -> list[str]:
        (d / "imgs").mkdir()
        for p in sorted((SAMPLE / "images").glob("*.jpg"))[:3]:
            shutil.copy(p, d / "imgs" / p.name)
        return ["recon", "photos", "imgs", *opts, "-o", "out"]

    return build


def _png_bomb(folder: Path) -> None:
    """A valid PNG header claiming 60000 x 60000 pixels, with one row of data."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", 60000, 60000, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * (3 * 60000 + 1))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    for i in range(3):
        (folder / f"img_{i}.png").write_bytes(png)


def _noise_images(folder: Path) -> None:
    """Three photos of unrelated random texture: COLMAP runs and finds no overlap."""
    import cv2

    rng = np.random.default_rng(0)
    for i in range(3):
        img = cv2.resize(
            rng.integers(0, 255, (60, 80), dtype=np.uint8), (640, 480), interpolation=cv2.INTER_NEAREST
        )
        cv2.imwrite(str(folder / f"img_{i}.jpg"), img)


def _session(toml: str, files: dict[str, bytes] | None = None, *opts: str) -> Build:
    def build(d: Path, base: dict[str, Path]) -> list[str]:
        s = d / "sess"
        s.mkdir()
        (s / "session.toml").write_text(toml)
        for rel, data in (files or {}).items():
            (s / rel).parent.mkdir(parents=True, exist_ok=True)
            (s / rel).write_bytes(data)
        return ["process", "sess", *opts, "-o", "out"]

    return build


def _fifo(d: Path, base: dict[str, Path]) -> list[str]:
    os.mkfifo(d / "scan.ply")
    return ["recon", "pointcloud", "scan.ply", "-o", "out"]


def _corrupt_laz(p: Path) -> None:
    """A real LAZ file (laspy + lazrs) whose header then says 10^9 points."""
    import laspy

    header = laspy.LasHeader(point_format=3, version="1.2")
    header.scales = [0.001] * 3
    las = laspy.LasData(header)
    xyz = np.random.default_rng(0).uniform(0, 1, (1000, 3))
    las.x, las.y, las.z = xyz.T
    las.write(str(p))
    data = bytearray(p.read_bytes())
    struct.pack_into("<I", data, 107, 1_000_000_000)
    p.write_bytes(bytes(data))


BASE_SCENE_POSE = [[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0.05], [0, 0, 0, 1.0]]

CASES: tuple[Case, ...] = (
    # ---- internal errors before: PCD header values, options, scene.json types, poses, sizes
    Case("pcd_viewpoint_short", _scan("s.pcd", _pcd(50, "VIEWPOINT 1 2\n")), ("s.pcd", "VIEWPOINT")),
    Case(
        "pcd_viewpoint_nan", _scan("s.pcd", _pcd(50, "VIEWPOINT nan 0 0 1 0 0 0\n")), ("s.pcd", "VIEWPOINT")
    ),
    Case("pcd_width_mismatch", _scan("s.pcd", _pcd(50, "", width=7)), ("s.pcd", "WIDTH")),
    Case("seed_negative", _sample_scan("--seed", "-1"), ("--seed",), rc=2),
    Case("density_inf", _sample_scan("--density", "inf"), ("--density",), rc=2),
    Case("voxel_inf", _sample_scan("--voxel", "inf"), ("--voxel",), rc=2),
    Case("fifo_scan", _fifo, ("scan.ply", "not a regular file")),
    Case("complex_npy", _scan("c.npy", _npy(np.ones((50, 3), complex))), ("c.npy", "complex")),
    Case(
        "big_endian_as_little",
        _scan(
            "b.npy",
            lambda p: np.save(p, np.random.default_rng(0).uniform(0, 1, (200, 3)).astype(">f4").view("<f4")),
        ),
        ("b.npy",),
    ),
    Case(
        "colinear_cloud",
        _scan("line.xyz", _cloud_file(np.c_[np.linspace(0, 1, 500), np.zeros(500), np.zeros(500)])),
        ("line.xyz",),
    ),
    Case(
        "plane_only_cloud",
        _scan(
            "plane.xyz", _cloud_file(np.c_[np.random.default_rng(1).uniform(0, 1, (3000, 2)), np.zeros(3000)])
        ),
        None,
        rc=0,
        warns=("plane.xyz", "no objects found"),
    ),
    Case(
        "poses_mirroring",
        _poses([[-1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]),
        ("poses.json", "mirror"),
    ),
    Case(
        "poses_scaled",
        _poses([[2.0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0], [0, 0, 0, 1]]),
        ("poses.json", "rigid"),
    ),
    Case("corrupt_laz", _scan("c.laz", _corrupt_laz), ("c.laz",)),
    Case("scene_density_string", _scene(_obj(density="heavy")), ("scene.json", "density")),
    Case("scene_density_true", _scene(_obj(density=True)), ("scene.json", "density")),
    Case("scene_mass_string", _scene(_obj(mass="1kg", density=None)), ("scene.json", "mass")),
    Case("scene_friction_short", _scene(_obj(friction=[0.5])), ("scene.json", "friction")),
    Case(
        "scene_friction_negative",
        _scene(_obj(friction=[-0.5, 0.005, 0.0001])),
        ("scene.json", "friction", "-0.5"),
    ),
    Case("scene_friction_string", _scene(_obj(friction="-0.5")), ("scene.json", "friction")),
    Case("scene_torsional_negative", _scene(_obj(friction=[0.5, -0.1, 0.0001])), ("scene.json", "friction")),
    Case("scene_friction_huge", _scene(_obj(friction=[1e9, 0.005, 0.0001])), ("scene.json", "friction")),
    Case("scene_friction_nan", _scene(_obj(friction=["nan", 0.0, 0.0])), ("scene.json", "friction")),
    Case("scene_rgba_short", _scene(_obj(rgba=[1, 0])), ("scene.json", "rgba")),
    Case("scene_name_number", _scene(_obj(name=5)), ("scene.json", "name")),
    Case("scene_name_100k", _scene(_obj(name="n" * 100_000)), ("scene.json", "name")),
    Case("scene_nested", _scene(raw="[" * 100_000), ("scene.json",)),
    Case(
        "scene_reflected",
        _scene(_pose([[-1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.05], [0, 0, 0, 1]])),
        ("scene.json", "world_from_object"),
    ),
    Case(
        "scene_singular",
        _scene(_pose([[0.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.05], [0, 0, 0, 1]])),
        ("scene.json", "world_from_object"),
    ),
    Case(
        "scene_last_row",
        _scene(_pose([[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.05], [1, 1, 1, 5]])),
        ("scene.json", "world_from_object"),
    ),
    Case(
        "scene_scaled_pose",
        _scene(_pose([[2.0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0.05], [0, 0, 0, 1]])),
        ("scene.json", "world_from_object"),
    ),
    Case("scene_normal_nan", _scene(_support(normal=["nan", 0, 1])), ("scene.json", "normal")),
    Case("scene_normal_zero", _scene(_support(normal=[0, 0, 0])), ("scene.json", "normal")),
    Case("scene_normal_sideways", _scene(_support(normal=[1, 0, 0])), ("scene.json", "normal")),
    Case("scene_normal_down", _scene(_support(normal=[0, 0, -1])), ("scene.json", "normal")),
    Case(
        "scene_duplicate_names",
        _scene(lambda doc: doc["objects"].append(dict(doc["objects"][0]))),
        ("scene.json", "box"),
    ),
    Case("scene_tiny_mesh", _tiny_scene, ("scene.json", "box")),
    Case(
        "mesh_vertex_count_lie",
        _mesh_bytes(
            b"ply\nformat binary_little_endian 1.0\nelement vertex 1000000000\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n"
            + bytes(64)
        ),
        ("box.ply",),
    ),
    Case("mesh_garbage", _mesh_bytes(b"\x00\xff" * 100), ("box.ply",)),
    Case("mesh_flat", _mesh_obj(lambda t: t.creation.box((0.1, 0.1, 0.0))), ("box",)),
    Case(
        "mesh_open",
        _mesh_obj(
            lambda t: t.Trimesh(
                t.creation.box((0.1, 0.1, 0.1)).vertices, t.creation.box((0.1, 0.1, 0.1)).faces[:-2]
            )
        ),
        None,
        rc=0,
        warns=("box", "closed manifold"),
    ),
    Case(
        "mesh_nan",
        _mesh_obj(
            lambda t: t.Trimesh(
                t.creation.box((0.1, 0.1, 0.1)).vertices * [1, 1, float("nan")],
                t.creation.box((0.1, 0.1, 0.1)).faces,
                process=False,
            )
        ),
        ("box",),
    ),
    # ---- validate: a hand-edited package, budgets
    Case(
        "validate_friction_negative",
        _package(lambda x: x.replace('friction="0.8', 'friction="-0.8', 1)),
        ("friction", "-0.8"),
    ),
    Case(
        "validate_unstable",
        _package(lambda x: x.replace('<key name="home"', '<key name="home" qvel="0 0 0 1e200 0 0"')),
        ("pkg", "warnings"),
    ),
    Case("validate_manifest_nested", _package_file("export.json", "[" * 100_000), ("export.json",)),
    Case(
        "validate_manifest_types",
        _package_file("export.json", '{"name": 5, "objects": "x"}'),
        ("export.json",),
    ),
    Case("validate_model_malformed", _package_file("box.xml", "<mujoco><worldbody>"), ("pkg",)),
    Case(
        "validate_not_a_folder", lambda d, b: ((d / "pkg").write_text("x"), ["validate", "pkg"])[1], ("pkg",)
    ),
    Case("validate_samples_huge", _package(lambda x: x, "--samples", "1000000000"), ("--samples",)),
    Case("validate_sim_seconds_huge", _package(lambda x: x, "--sim-seconds", "1e9"), ("--sim-seconds",)),
    # ---- calibration: options and logs
    Case("calibrate_window_nan", _calibrate(None, "--window", "nan"), ("--window",), rc=2),
    Case("calibrate_qvel_weight_nan", _calibrate(None, "--qvel-weight", "nan"), ("--qvel-weight",), rc=2),
    Case("calibrate_despike_negative", _calibrate(None, "--despike", "-1"), ("--despike",)),
    Case(
        "calibrate_holdout_is_log",
        _calibrate(None, "--holdout", str(SAMPLE / "logs" / "excite_00.csv")),
        ("--holdout", "excite_00.csv"),
    ),
    Case("log_npz_unequal", _calibrate(_npz_unequal), ("log.npz",)),
    Case("log_h5_unequal", _calibrate(_h5_unequal), ("log.h5",)),
    Case("log_gzip_bomb", _calibrate(_csv_log("bomb.csv.gz", _gzip_bomb)), ("bomb.csv.gz",)),
    Case("log_time_ms", _calibrate(_csv_log("ms.csv", _ms)), ("ms.csv", "time")),
    Case(
        "log_bom",
        _calibrate(_csv_log("bom.csv", lambda h, r: b"\xef\xbb\xbf" + _csv_bytes(h, r))),
        None,
        rc=0,
    ),
    Case("log_gap_100s", _calibrate(_csv_log("gap.csv", _gap)), None, rc=0),
    # ---- photos
    Case("photos_png_bomb", _photos(_png_bomb), ("img_0.png",)),
    Case("photos_no_overlap", _photos(_noise_images), ("imgs",)),
    Case("photos_intrinsics_nan", _sample_photos("--intrinsics", "nan,1,1,1"), ("--intrinsics",)),
    Case("photos_intrinsics_zero", _sample_photos("--intrinsics", "0,0,0,0"), ("--intrinsics",)),
    # ---- sessions
    Case(
        "session_outside_path",
        _session('[session]\nname = "s"\n[lidar]\nfiles = ["/etc/hostname"]\n'),
        ("session.toml", "/etc/hostname"),
    ),
    Case("process_stages_empty", _session('[session]\nname = "s"\n', None, "--stages", ""), ("--stages",)),
    Case(
        "session_unknown_key",
        _session('[session]\nname = "s"\n[lidar]\nunit = "mm"\n'),
        ("session.toml", "'units'"),
    ),
    Case(
        "session_friction_nan",
        _session('[session]\nname = "s"\n[objects]\nfriction = nan\n'),
        ("session.toml", "friction"),
    ),
    Case(
        "session_density_negative",
        _session('[session]\nname = "s"\n[objects]\ndensity = -5.0\n'),
        ("session.toml", "density"),
    ),
    Case(
        "process_stages_typo",
        _session('[session]\nname = "s"\n', None, "--stages", "recn"),
        ("--stages", "'recon'"),
    ),
    # ---- options that are numbers: finite, in range, counts from 0
    Case("export_workers_negative", _scene(None, None, "--workers", "-1"), ("--workers",), rc=2),
    Case("calibrate_window_negative", _calibrate(None, "--window", "-1"), ("--window",)),
    Case("sensor_origin_nan", _sample_scan("--sensor-origin", "nan,0,0"), ("--sensor-origin",), rc=2),
    Case(
        "log_fifo",
        _calibrate(lambda d: (os.mkfifo(d / "log.csv"), "log.csv")[1]),
        ("log.csv", "not a regular file"),
    ),
    # ---- the machine: a disk that fills up while the scene is written
    Case("disk_full", _sample_scan(), ("out",), fsize=20_000),
    # ---- markup in user text
    Case("markup_in_path", lambda d, b: ["recon", "pointcloud", "a[/]b.ply", "-o", "out"], ("a[/]b.ply",)),
    Case(
        "markup_in_section",
        _session('[session]\nname = "s[/]x"\n[robot]\nmodel = "[red]m.xml"\n'),
        ("[red]m.xml",),
    ),
)


def build_base(folder: Path) -> dict[str, Path]:
    """The valid inputs cases start from: the sample scan, a one-box scene and its exported package."""
    import trimesh

    from real2sim.scene import Scene, SceneObject, Support, save_scene

    folder.mkdir(parents=True, exist_ok=True)
    box = SceneObject("box", trimesh.creation.box((0.1, 0.1, 0.1)), np.array(BASE_SCENE_POSE))
    scene = save_scene(Scene(Support(), (box,)), folder / "scene")
    pkg = folder / "package"
    if not pkg.is_dir():
        cmd = [sys.executable, "-m", "real2sim", "-q", "export", str(scene), "-o", str(pkg), "--workers", "1",
               "--no-cache", "--format", "mjcf", "--name", "box"]  # fmt: skip
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, timeout=300)
    return {"scan": SAMPLE / "lidar" / "scan_00.ply", "scene": scene, "package": pkg}


def _tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def run_corpus(
    cases: tuple[Case, ...], work: Path, limit_s: float = 60.0, memory_gb: float = 2.0
) -> tuple[list[str], list[dict]]:
    """Run ``cases`` (inputs built under ``work``) and return (broken rules, raw results)."""
    base = build_base(work / "base")
    tmp = work / "tmp"  # TMPDIR of every run: nothing may be left in it
    tmp.mkdir(exist_ok=True)
    spec, before = [], {}
    for c in cases:
        d = work / c.id
        d.mkdir()
        argv = c.build(d, base)
        before[c.id] = _tree(d)
        spec.append({"id": c.id, "argv": argv, "cwd": str(d), "fsize": c.fsize})
    (work / "spec.json").write_text(json.dumps(spec))
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=str(ROOT), COLUMNS="200")
    cmd = [sys.executable, "-m", "tests.reliability.cli_runner", str(work / "spec.json"),
           str(work / "results.json"), str(limit_s), str(memory_gb)]  # fmt: skip
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, timeout=limit_s * len(cases) + 120)
    results = json.loads((work / "results.json").read_text())["results"]
    problems = []
    for c, r in zip(cases, results, strict=True):
        d = work / c.id
        lines = r["stderr"].splitlines()
        where = f"{c.id}: rc {r['rc']}, stderr {r['stderr'][-600:]!r}"
        if c.expect is None:
            if r["rc"] != c.rc:
                problems.append(f"{where}: expected success")
            if not all(w in " ".join(r["stderr"].split()) for w in c.warns):
                problems.append(f"{where}: no warning {c.warns}")
            continue
        if r["rc"] != c.rc:
            problems.append(f"{where}: expected exit {c.rc}")
        if len(lines) != 1 or not lines[0].startswith("error: "):
            problems.append(f"{where}: not one error line")
        elif not all(e in lines[0] for e in c.expect):
            problems.append(f"{where}: the line does not name {c.expect}")
        if _tree(d) != before[c.id]:
            problems.append(f"{where}: wrote {sorted(_tree(d) - before[c.id])}")
        if r["seconds"] > limit_s:
            problems.append(f"{where}: over {limit_s} s")
    left = sorted(_tree(tmp))
    if left:
        problems.append(f"left in TMPDIR: {left[:10]}")
    return problems, results
