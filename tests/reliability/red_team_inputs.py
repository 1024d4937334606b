"""The red-team corpus's inputs: each builder writes one bad (or odd) input into a case's folder and returns the
``real2sim`` command line that reads it (``red_team.CASES`` pairs them with what the user must see)."""

from __future__ import annotations

import json
import os
import shutil
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
Build = Callable[[Path, dict[str, Path]], list[str]]
"""``build(case folder, base inputs)`` -> the command line."""


def pcd(points: int, extra: str = "", width: int | None = None) -> bytes:
    head = (
        f"VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH {width or points}\nHEIGHT 1\n"
        f"{extra}POINTS {points}\nDATA ascii\n"
    )
    rng = np.random.default_rng(0)
    body = "\n".join(" ".join(f"{v:.4f}" for v in p) for p in rng.uniform(0, 1, (points, 3)))
    return (head + body + "\n").encode()


def scan(name: str, data: bytes | Callable[[Path], None], *opts: str) -> Build:
    def build(d: Path, base: dict[str, Path]) -> list[str]:
        if callable(data):
            data(d / name)
        else:
            (d / name).write_bytes(data)
        return ["recon", "pointcloud", name, *opts, "-o", "out"]

    return build


def sample_scan(*opts: str) -> Build:
    def build(d: Path, base: dict[str, Path]) -> list[str]:
        return ["recon", "pointcloud", str(base["scan"]), *opts, "-o", "out"]

    return build


def poses(pose: list[list[float]]) -> Build:
    """The sample scan with a poses file giving it ``pose``."""

    def build(d: Path, base: dict[str, Path]) -> list[str]:
        (d / "poses.json").write_text(json.dumps({base["scan"].name: pose}))
        return ["recon", "pointcloud", str(base["scan"]), "--poses", "poses.json", "-o", "out"]

    return build


def npy(arr: np.ndarray) -> Callable[[Path], None]:
    return lambda p: np.save(p, arr)


def cloud_file(points: np.ndarray) -> Callable[[Path], None]:
    return lambda p: p.write_text("\n".join(" ".join(f"{v:.5f}" for v in q) for q in points) + "\n")


def scene(edit: Callable[[dict], None] | None = None, raw: str | None = None, *opts: str) -> Build:
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


def obj(**kw: object) -> Callable[[dict], None]:
    return lambda doc: doc["objects"][0].update(kw)


def support(**kw: object) -> Callable[[dict], None]:
    return lambda doc: doc["support"].update(kw)


def pose(m: list[list[float]]) -> Callable[[dict], None]:
    return obj(world_from_object=m)


def tiny_scene(d: Path, base: dict[str, Path]) -> list[str]:
    """The box scaled to 1 µm."""
    import trimesh

    args = scene()(d, base)
    trimesh.creation.box((1e-6, 1e-6, 1e-6)).export(d / "scene" / "meshes" / "box.ply")
    return args


def mesh_bytes(data: bytes) -> Build:
    """The base scene with its mesh file replaced by ``data``."""

    def build(d: Path, base: dict[str, Path]) -> list[str]:
        args = scene()(d, base)
        (d / "scene" / "meshes" / "box.ply").write_bytes(data)
        return args

    return build


def mesh_obj(make: Callable) -> Build:
    """The base scene with its mesh replaced by ``make(trimesh)``."""

    def build(d: Path, base: dict[str, Path]) -> list[str]:
        import trimesh

        args = scene()(d, base)
        make(trimesh).export(d / "scene" / "meshes" / "box.ply")
        return args

    return build


def package(edit: Callable[[str], str], *opts: str) -> Build:
    """The base package copied into ``pkg/`` with ``edit`` applied to its model XML."""

    def build(d: Path, base: dict[str, Path]) -> list[str]:
        shutil.copytree(base["package"], d / "pkg")
        xml = d / "pkg" / "box.xml"
        xml.write_text(edit(xml.read_text()))
        return ["validate", "pkg", *opts]

    return build


def package_file(name: str, text: str) -> Build:
    """The base package copied into ``pkg/`` with its file ``name`` replaced by ``text``."""

    def build(d: Path, base: dict[str, Path]) -> list[str]:
        shutil.copytree(base["package"], d / "pkg")
        (d / "pkg" / name).write_text(text)
        return ["validate", "pkg"]

    return build


def calibrate(log: Callable[[Path], str] | None = None, *opts: str, map_text: str | None = None) -> Build:
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


def sample_rows() -> tuple[list[str], np.ndarray]:
    lines = (SAMPLE / "logs" / "excite_00.csv").read_text().splitlines()
    return lines[0].split(","), np.array([[float(v) for v in ln.split(",")] for ln in lines[1:]])


def csv_log(name: str, transform: Callable[[list[str], np.ndarray], bytes]) -> Callable[[Path], str]:
    def write(d: Path) -> str:
        header, rows = sample_rows()
        (d / name).write_bytes(transform(header, rows))
        return name

    return write


def csv_bytes(header: list[str], rows: np.ndarray) -> bytes:
    return (
        ",".join(header) + "\n" + "\n".join(",".join(repr(float(v)) for v in r) for r in rows) + "\n"
    ).encode()


def gap(header: list[str], rows: np.ndarray) -> bytes:
    rows = rows.copy()
    rows[len(rows) // 2 :, 0] += 100.0  # one 100 s gap in the middle
    return csv_bytes(header, rows)


def ms(header: list[str], rows: np.ndarray) -> bytes:
    rows = rows.copy()
    rows[:, 0] *= 1000.0
    return csv_bytes(header, rows)


def gzip_bomb(header: list[str], rows: np.ndarray) -> bytes:
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


def npz_unequal(d: Path) -> str:
    np.savez(d / "log.npz", time=np.arange(10) * 0.01, q_shoulder=np.zeros(7), q_elbow=np.zeros(10))
    return "log.npz"


def h5_unequal(d: Path) -> str:
    import h5py

    with h5py.File(d / "log.h5", "w") as f:
        f["time"] = np.arange(10) * 0.01
        f["q_shoulder"] = np.zeros(7)
        f["q_elbow"] = np.zeros(10)
    return "log.h5"


def photos(write: Callable[[Path], None], *opts: str) -> Build:
    def build(d: Path, base: dict[str, Path]) -> list[str]:
        (d / "imgs").mkdir()
        write(d / "imgs")
        return ["recon", "photos", "imgs", *opts, "-o", "out"]

    return build


def sample_photos(*opts: str) -> Build:
    def build(d: Path, base: dict[str, Path]) -> list[str]:
        (d / "imgs").mkdir()
        for p in sorted((SAMPLE / "images").glob("*.jpg"))[:3]:
            shutil.copy(p, d / "imgs" / p.name)
        return ["recon", "photos", "imgs", *opts, "-o", "out"]

    return build


def png_bomb(folder: Path) -> None:
    """A valid PNG header claiming 60000 x 60000 pixels, with one row of data."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", 60000, 60000, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * (3 * 60000 + 1))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    for i in range(3):
        (folder / f"img_{i}.png").write_bytes(png)


def noise_images(folder: Path) -> None:
    """Three photos of unrelated random texture: COLMAP runs and finds no overlap."""
    import cv2

    rng = np.random.default_rng(0)
    for i in range(3):
        img = cv2.resize(
            rng.integers(0, 255, (60, 80), dtype=np.uint8), (640, 480), interpolation=cv2.INTER_NEAREST
        )
        cv2.imwrite(str(folder / f"img_{i}.jpg"), img)


def session(toml: str, files: dict[str, bytes] | None = None, *opts: str) -> Build:
    def build(d: Path, base: dict[str, Path]) -> list[str]:
        s = d / "sess"
        s.mkdir()
        (s / "session.toml").write_text(toml)
        for rel, data in (files or {}).items():
            (s / rel).parent.mkdir(parents=True, exist_ok=True)
            (s / rel).write_bytes(data)
        return ["process", "sess", *opts, "-o", "out"]

    return build


def fifo(d: Path, base: dict[str, Path]) -> list[str]:
    os.mkfifo(d / "scan.ply")
    return ["recon", "pointcloud", "scan.ply", "-o", "out"]


def corrupt_laz(p: Path) -> None:
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


def argv(*args: str) -> Build:
    """A command line that needs no input built."""
    return lambda d, base: list(args)


def made(write: Callable[[Path], object], *args: str) -> Build:
    """``write(folder)`` then the command line ``args``."""

    def build(d: Path, base: dict[str, Path]) -> list[str]:
        write(d)
        return list(args)

    return build


def csv_rows(edit: Callable[[np.ndarray], np.ndarray]) -> Callable[[Path], str]:
    """The sample log's rows edited, as ``l.csv``."""
    return csv_log("l.csv", lambda h, r: csv_bytes(h, edit(r.copy())))


def model_file(text: str) -> Build:
    """Calibrate a robot model whose file holds ``text``."""

    def build(d: Path, base: dict[str, Path]) -> list[str]:
        (d / "m.xml").write_text(text)
        logs = SAMPLE / "logs"
        return ["calibrate", "m.xml", "--log", str(logs / "excite_00.csv"), "--map", str(logs / "map.toml"),
                "--fit", "joint:*.damping", "--no-report", "-o", "out"]  # fmt: skip

    return build


def with_row(i: int, col: int, value: float) -> Callable[[np.ndarray], np.ndarray]:
    def edit(r: np.ndarray) -> np.ndarray:
        r[i, col] = value
        return r

    return edit
