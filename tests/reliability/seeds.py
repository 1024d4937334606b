"""Small, valid seed files for the reader fuzzers: one per format and layout the readers accept.

Synthetic, so CI needs no data; where ``../shared/data`` is present its real headers (the OSD PCD, the 3DGS toy cat,
the DFKI pendulum CSV) are used, cut to a few points.
"""

from __future__ import annotations

import gzip
import io
import struct
import tempfile
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
N = 12  # points per seed: the readers' paths are all exercised, each case stays cheap


def _lzf_compress(raw: bytes) -> bytes:
    try:
        import lzf

        out = lzf.compress(raw)
        if out is not None:
            return out
    except ImportError:
        pass
    return b"".join(bytes([len(c) - 1]) + c for c in (raw[i : i + 32] for i in range(0, len(raw), 32)))


def _points(rng: np.random.Generator, n: int = N) -> np.ndarray:
    return rng.uniform(-0.5, 0.5, (n, 3)).astype(np.float32)


def sample_scan_ply(rng: np.random.Generator) -> bytes:
    from real2sim.samplegen.lidar import ply_bytes

    return ply_bytes(_points(rng), rng.uniform(0, 1, N).astype(np.float32))


def ply_ascii_with_grid(rng: np.random.Generator) -> bytes:
    """Bunny-scan layout: a ``range_grid`` list element before the vertices, colours as uchar."""
    p = _points(rng)
    head = ("ply\nformat ascii 1.0\nelement range_grid 3\nproperty list uchar int vertex_indices\n"
            f"element vertex {N}\nproperty float x\nproperty float y\nproperty float z\n"
            "property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n")  # fmt: skip
    grid = "1 0\n0\n2 1 2\n"
    rows = "".join(f"{x:.4f} {y:.4f} {z:.4f} {i * 20} 30 40\n" for i, (x, y, z) in enumerate(p))
    return (head + grid + rows).encode()


def ply_binary_mesh(rng: np.random.Generator) -> bytes:
    """Big-endian double vertices with normals, then a face list element (as mesh PLYs are)."""
    p = _points(rng).astype(">f8")
    head = (b"ply\nformat binary_big_endian 1.0\nelement vertex 12\nproperty double x\nproperty double y\n"
            b"property double z\nproperty float nx\nproperty float ny\nproperty float nz\n"
            b"element face 2\nproperty list uchar int vertex_indices\nend_header\n")  # fmt: skip
    rec = np.zeros(N, dtype=[("p", ">f8", 3), ("n", ">f4", 3)])
    rec["p"], rec["n"] = p, [0, 0, 1]
    faces = b"".join(b"\x03" + struct.pack(">3i", *t) for t in ((0, 1, 2), (2, 3, 4)))
    return head + rec.tobytes() + faces


def _osd_header(npts: int, width: int, height: int, data: str) -> bytes:
    return (
        "# .PCD v0.7 - Point Cloud Data file format\nVERSION 0.7\nFIELDS label x y z rgba\nSIZE 4 4 4 4 4\n"
        f"TYPE U F F F U\nCOUNT 1 1 1 1 1\nWIDTH {width}\nHEIGHT {height}\nVIEWPOINT 0 0 0 1 0 0 0\n"
        f"POINTS {npts}\nDATA {data}\n"
    ).encode()


def _osd_columns(rng: np.random.Generator) -> list[np.ndarray]:
    """label, x, y, z, rgba of 4x3 organised points, a few NaN (invalid) like a Kinect scan."""
    pcd = SHARED / "pointclouds" / "osd_tabletop" / "test0.pcd"
    if pcd.is_file():
        from real2sim.recon.io.pcd import read_pcd

        c = read_pcd(pcd)
        idx = np.flatnonzero(c.valid_mask())[:: max(1, int(c.valid_mask().sum()) // N)][:N]
        pts = c.points[idx].astype(np.float32)
        rgba = (np.round(c.colors[idx] * 255).astype(np.uint32) * [65536, 256, 1]).sum(1).astype(np.uint32)
        labels = c.labels[idx].astype(np.uint32)
    else:
        pts, labels = _points(rng), rng.integers(1, 40, N).astype(np.uint32)
        rgba = rng.integers(0, 2**24, N).astype(np.uint32)
    pts[[2, 7]] = np.nan
    return [labels, pts[:, 0], pts[:, 1], pts[:, 2], rgba]


def pcd_lzf(rng: np.random.Generator) -> bytes:
    cols = _osd_columns(rng)
    raw = b"".join(np.asarray(c).astype("<" + np.asarray(c).dtype.str[1:]).tobytes() for c in cols)
    comp = _lzf_compress(raw)
    return _osd_header(N, 4, 3, "binary_compressed") + struct.pack("<II", len(comp), len(raw)) + comp


def pcd_binary(rng: np.random.Generator) -> bytes:
    cols = _osd_columns(rng)
    rec = np.zeros(N, dtype=[("l", "<u4"), ("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("c", "<u4")])
    for name, c in zip(rec.dtype.names, cols, strict=True):
        rec[name] = c
    return _osd_header(N, N, 1, "binary") + rec.tobytes()


def pcd_ascii(rng: np.random.Generator) -> bytes:
    cols = _osd_columns(rng)
    rows = "".join(" ".join(str(c[i]) for c in cols) + "\n" for i in range(N))
    return _osd_header(N, N, 1, "ascii") + rows.encode()


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def npy_plain(rng: np.random.Generator) -> bytes:
    return _npy(np.concatenate([_points(rng), rng.uniform(0, 255, (N, 3))], axis=1).astype(np.float64))


def npy_structured(rng: np.random.Generator) -> bytes:
    rec = np.zeros(N, dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("intensity", "<u2"), ("label", "u1")])
    p = _points(rng)
    rec["x"], rec["y"], rec["z"], rec["label"] = p[:, 0], p[:, 1], p[:, 2], 3
    return _npy(rec)


def kitti_bin(rng: np.random.Generator) -> bytes:
    return np.concatenate([_points(rng), rng.uniform(0, 1, (N, 1))], axis=1).astype("<f4").tobytes()


def xyz_text(rng: np.random.Generator) -> bytes:
    return (
        "# x y z r g b\n" + "".join(f"{x:.4f},{y:.4f},{z:.4f},200,10,30\n" for x, y, z in _points(rng))
    ).encode()


def splat_ply(rng: np.random.Generator) -> bytes:
    """The INRIA layout (SH degree 3) of the real toy-cat splat when present, else a synthetic degree-0 one."""
    real = SHARED / "splats" / "toy_cat_3dgs.ply"
    if real.is_file():
        raw = real.read_bytes()
        end = raw.index(b"end_header\n") + len(b"end_header\n")
        head = raw[:end].decode()
        nprops = head.count("property ")
        count_line = next(ln for ln in head.splitlines() if ln.startswith("element vertex"))
        head = head.replace(count_line, f"element vertex {N}")
        return head.encode() + raw[end : end + N * nprops * 4]
    from real2sim.recon.io.splat import GaussianSplat, write_splat

    q = rng.normal(size=(N, 4))
    s = GaussianSplat(_points(rng).astype(float), rng.uniform(0.01, 0.1, (N, 3)), q / np.linalg.norm(q, axis=1)[:, None],
                      rng.uniform(0.1, 0.9, N), rng.uniform(0, 1, (N, 3)))  # fmt: skip
    with tempfile.TemporaryDirectory() as d:
        write_splat(Path(d) / "s.ply", s)
        return (Path(d) / "s.ply").read_bytes()


def splat_ascii(rng: np.random.Generator) -> bytes:
    from real2sim.recon.io.splat import REQUIRED

    head = f"ply\nformat ascii 1.0\nelement vertex {N}\n" + "".join(f"property float {p}\n" for p in REQUIRED)
    vals = rng.normal(size=(N, len(REQUIRED)))
    return (head + "end_header\n" + "".join(" ".join(f"{v:.5f}" for v in r) + "\n" for r in vals)).encode()


def _log_columns(rng: np.random.Generator) -> dict[str, np.ndarray]:
    t = np.arange(N) / 300.0
    return {"time": t, "position": np.sin(t), "velocity": np.cos(t), "torque": rng.normal(size=N)}


def log_csv(rng: np.random.Generator) -> bytes:
    real = SHARED / "robot_logs" / "simple_pendulum" / "sysid" / "data_measured.csv"
    if real.is_file():
        return b"\n".join(real.read_bytes().splitlines()[: N + 1]) + b"\n"
    cols = _log_columns(rng)
    return (
        ",".join(cols)
        + "\n"
        + "".join(",".join(f"{c[i]:.6f}" for c in cols.values()) + "\n" for i in range(N))
    ).encode()


def log_csv_gz(rng: np.random.Generator) -> bytes:
    return gzip.compress(log_csv(rng), mtime=0)


def log_npz(rng: np.random.Generator) -> bytes:
    buf = io.BytesIO()
    cols = _log_columns(rng)
    np.savez(buf, time=cols["time"], state=np.stack([cols["position"], cols["velocity"]], 1))
    return buf.getvalue()


def log_parquet(rng: np.random.Generator) -> bytes:
    """LeRobot layout: ``timestamp`` plus vector columns ``observation.state`` and ``action``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = _log_columns(rng)
    table = pa.table({
        "timestamp": cols["time"],
        "observation.state": [[float(a), float(b)] for a, b in zip(cols["position"], cols["velocity"], strict=True)],
        "action": [[float(x)] for x in cols["torque"]],
    })  # fmt: skip
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="snappy")
    return buf.getvalue()


def las(rng: np.random.Generator) -> bytes:
    """LAS 1.4, point format 3 (x y z intensity classification rgb); needs ``laspy`` (the formats extra)."""
    import laspy

    las = laspy.LasData(laspy.LasHeader(point_format=3, version="1.4"))
    las.header.scales, las.header.offsets = [0.001] * 3, [0.0] * 3
    p = _points(rng).astype(float)
    las.x, las.y, las.z = p[:, 0], p[:, 1], p[:, 2]
    las.intensity = rng.integers(0, 1000, N).astype(np.uint16)
    las.classification = np.full(N, 2, dtype=np.uint8)
    buf = io.BytesIO()
    las.write(buf)
    return buf.getvalue()


def log_hdf5(rng: np.random.Generator) -> bytes:
    """One 1-D and one 2-D dataset; needs ``h5py`` (the formats extra)."""
    import h5py

    cols = _log_columns(rng)
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        f["time"] = cols["time"]
        f["joints/state"] = np.stack([cols["position"], cols["velocity"]], 1)
    return buf.getvalue()


def _have(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


POINTS = {"scan.ply": sample_scan_ply, "grid.ply": ply_ascii_with_grid, "mesh.ply": ply_binary_mesh,
          "lzf.pcd": pcd_lzf, "bin.pcd": pcd_binary, "ascii.pcd": pcd_ascii, "plain.npy": npy_plain,
          "rec.npy": npy_structured, "velo.bin": kitti_bin, "cloud.xyz": xyz_text}  # fmt: skip
SPLATS = {"splat.ply": splat_ply, "ascii_splat.ply": splat_ascii}
LOGS = {"log.csv": log_csv, "log.csv.gz": log_csv_gz, "log.npz": log_npz}
if _have("laspy"):
    POINTS["cloud.las"] = las
if _have("pyarrow"):
    LOGS["episode.parquet"] = log_parquet
if _have("h5py"):
    LOGS["log.h5"] = log_hdf5


def build(makers: dict, seed: int = 0) -> dict[str, bytes]:
    """``{file name: bytes}`` of every seed in ``makers``."""
    rng = np.random.default_rng(seed)
    return {name: make(rng) for name, make in makers.items()}
