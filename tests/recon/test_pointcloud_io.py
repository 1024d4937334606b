"""Reader round-trips on tiny fixtures written here, and reader errors."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from real2sim.errors import InputError
from real2sim.recon.io import read_points
from real2sim.recon.io.lzf import lzf_decompress, lzf_decompress_py

RNG = np.random.default_rng(0)
PTS = RNG.uniform(-1, 1, (50, 3)).astype(np.float32)
RGB = RNG.integers(0, 256, (50, 3)).astype(np.uint8)


def _lzf_literal(data: bytes) -> bytes:
    """A valid LZF stream made only of literal runs (enough to exercise the reader's decoder)."""
    out = bytearray()
    for i in range(0, len(data), 32):
        chunk = data[i : i + 32]
        out.append(len(chunk) - 1)
        out += chunk
    return bytes(out)


def test_lzf_back_references() -> None:
    # "abcabcabcX": literal "abc", back-ref len 6 offset 3 (overlapping), literal "X"
    src = bytes([2]) + b"abc" + bytes([(4 << 5) | 0, 2]) + bytes([0]) + b"X"
    assert lzf_decompress(src, 10) == b"abcabcabcX"
    with pytest.raises(ValueError):
        lzf_decompress(src, 11)


def test_lzf_c_and_python_decoders_agree() -> None:
    lzf = pytest.importorskip(
        "lzf", reason="python-lzf (C decoder) not installed; the pure-Python one is tested above"
    )
    rng = np.random.default_rng(1)
    # compressible data with long and overlapping repeats, as organised float clouds have
    data = np.repeat(rng.integers(0, 4, 4000, dtype=np.uint8), rng.integers(1, 40, 4000)).tobytes()
    comp = lzf.compress(data)
    assert comp is not None and len(comp) < len(data)
    assert lzf_decompress(comp, len(data)) == data == lzf_decompress_py(comp, len(data))
    with pytest.raises(ValueError):
        lzf_decompress(comp, len(data) + 1)
    with pytest.raises(ValueError):
        lzf_decompress(comp[: len(comp) // 2], len(data))


def _ply_header(fmt: str, n: int, extra: str = "") -> str:
    return (f"ply\nformat {fmt} 1.0\nelement vertex {n}\nproperty float x\nproperty float y\nproperty float z\n"
            f"property uchar red\nproperty uchar green\nproperty uchar blue\n{extra}end_header\n")  # fmt: skip


def test_ply_ascii_and_binary_with_extra_element(tmp_path: Path) -> None:
    extra = "element range_grid 4\nproperty list uchar int vertex_indices\n"
    lines = [
        " ".join(f"{v:.7g}" for v in p) + " " + " ".join(str(c) for c in col)
        for p, col in zip(PTS, RGB, strict=False)
    ]
    a = tmp_path / "a.ply"
    a.write_text(_ply_header("ascii", 50, extra) + "\n".join(lines) + "\n1 0\n0\n1 3\n0\n")
    c = read_points(a)
    np.testing.assert_allclose(c.points, PTS, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(c.colors, RGB / 255.0)
    rec = np.empty(50, dtype=[("p", "<f4", 3), ("c", "u1", 3)])
    rec["p"], rec["c"] = PTS, RGB
    b = tmp_path / "b.ply"
    b.write_bytes(
        _ply_header("binary_little_endian", 50, extra).encode() + rec.tobytes() + b"\x01\x00\x00\x00\x00"
    )
    cb = read_points(b, units="mm")
    np.testing.assert_allclose(cb.points, PTS.astype(np.float64) * 1e-3)
    t = tmp_path / "t.ply"
    t.write_bytes(_ply_header("binary_little_endian", 50).encode() + rec.tobytes()[:-40])
    with pytest.raises(InputError, match="truncated"):
        read_points(t)


def _pcd(mode: str, organised: bool = False) -> bytes:
    n = len(PTS)
    pts = PTS.copy()
    if organised:
        pts[::7] = np.nan
    rgb = ((RGB[:, 0].astype(np.uint32) << 16) | (RGB[:, 1].astype(np.uint32) << 8) | RGB[:, 2]).view(
        np.float32
    )
    lab = np.arange(n, dtype=np.uint32)
    w, h = (10, 5) if organised else (n, 1)
    head = (f"VERSION 0.7\nFIELDS x y z rgb label\nSIZE 4 4 4 4 4\nTYPE F F F F U\nCOUNT 1 1 1 1 1\nWIDTH {w}\n"
            f"HEIGHT {h}\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS {n}\nDATA {mode}\n").encode()  # fmt: skip
    if mode == "ascii":
        rows = [" ".join(repr(float(v)) for v in (*p, c)) + f" {lb}" for p, c, lb in
                zip(pts.astype(float), rgb.astype(float), lab, strict=False)]  # fmt: skip
        return head + ("\n".join(rows) + "\n").encode()
    rec = np.empty(n, dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("rgb", "<f4"), ("label", "<u4")])
    rec["x"], rec["y"], rec["z"], rec["rgb"], rec["label"] = pts[:, 0], pts[:, 1], pts[:, 2], rgb, lab
    if mode == "binary":
        return head + rec.tobytes()
    soa = b"".join(rec[f].tobytes() for f in ("x", "y", "z", "rgb", "label"))
    comp = _lzf_literal(soa)
    return head + struct.pack("<II", len(comp), len(soa)) + comp


@pytest.mark.parametrize("mode", ["ascii", "binary", "binary_compressed"])
def test_pcd_modes(tmp_path: Path, mode: str) -> None:
    p = tmp_path / f"{mode}.pcd"
    p.write_bytes(_pcd(mode, organised=True))
    c = read_points(p)
    assert len(c) == 50 and c.width == 10 and c.height == 5
    assert np.isnan(c.points[::7]).all() and (~c.valid_mask()).sum() == 8
    ok = c.valid_mask()
    np.testing.assert_allclose(c.points[ok], PTS[ok], rtol=1e-6)
    np.testing.assert_allclose(c.colors[ok], RGB[ok] / 255.0)
    np.testing.assert_array_equal(c.labels, np.arange(50))


def test_pcd_truncated(tmp_path: Path) -> None:
    p = tmp_path / "t.pcd"
    p.write_bytes(_pcd("binary_compressed")[:-30])
    with pytest.raises(InputError, match="truncated"):
        read_points(p)


def test_text_npy_kitti(tmp_path: Path) -> None:
    x = tmp_path / "a.xyz"
    x.write_text("\n".join(" ".join(repr(float(v)) for v in p) + " 0.5" for p in PTS))
    c = read_points(x, units="cm")
    np.testing.assert_allclose(c.points, PTS.astype(float) * 0.01)
    np.testing.assert_allclose(c.intensity, 0.5)
    n = tmp_path / "a.npy"
    np.save(n, PTS)
    np.testing.assert_allclose(read_points(n).points, PTS)
    k = tmp_path / "a.bin"
    np.hstack([PTS, np.ones((50, 1), np.float32)]).astype("<f4").tofile(k)
    ck = read_points(k)
    np.testing.assert_allclose(ck.points, PTS)
    np.testing.assert_allclose(ck.sensor_origin, 0.0)
    (tmp_path / "bad.bin").write_bytes(b"\x00" * 17)
    with pytest.raises(InputError, match="multiple of 16"):
        read_points(tmp_path / "bad.bin")


def test_empty_and_nan(tmp_path: Path) -> None:
    e = tmp_path / "e.xyz"
    e.write_text("# nothing\n")
    with pytest.raises(InputError, match="no points"):
        read_points(e)
    nan = tmp_path / "n.npy"
    np.save(nan, np.full((10, 3), np.nan))
    with pytest.raises(InputError, match="invalid"):
        read_points(nan)
    with pytest.raises(InputError, match="unsupported"):
        read_points(Path(__file__))


def test_las_roundtrip(tmp_path: Path) -> None:
    laspy = pytest.importorskip("laspy", reason="LAS support is the optional 'formats' extra")
    hdr = laspy.LasHeader(point_format=3, version="1.2")
    hdr.scales = np.array([1e-4, 1e-4, 1e-4])
    las = laspy.LasData(hdr)
    las.x, las.y, las.z = PTS[:, 0], PTS[:, 1], PTS[:, 2]
    las.intensity = np.arange(50, dtype=np.uint16)
    p = tmp_path / "a.las"
    las.write(str(p))
    c = read_points(p)
    np.testing.assert_allclose(c.points, PTS, atol=1e-4)
    np.testing.assert_allclose(c.intensity, np.arange(50))
