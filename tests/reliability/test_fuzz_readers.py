"""Each public reader on 2,000 seeded mutants of valid files: only ``Real2SimError`` (one line), never a hang;
then one regression test per crash the fuzzer found (the inputs are small and built here)."""

from __future__ import annotations

import gzip
import io
import struct

import numpy as np
import pytest

from real2sim.calibration import read_log
from real2sim.errors import InputError
from real2sim.recon import read_points, read_splat
from tests.reliability import seeds
from tests.reliability.mutate import HANG_S, fuzz

CASES = 2000
READERS = {"read_points": (read_points, seeds.POINTS), "read_splat": (read_splat, seeds.SPLATS),
           "read_log": (read_log, seeds.LOGS)}  # fmt: skip


@pytest.mark.parametrize("name", sorted(READERS))
def test_seeds_are_valid_and_mutants_only_raise_real2sim_errors(name, tmp_path):
    reader, makers = READERS[name]
    files = seeds.build(makers)
    for fname, data in files.items():  # every seed is read without error
        (tmp_path / fname).write_bytes(data)
        reader(tmp_path / fname)
    res = fuzz(reader, files, tmp_path, CASES, seed=0)
    assert res.cases == CASES, res.summary()
    assert not res.crashes, "\n".join(f"{s} case {k}: {e}" for s, k, e, _ in res.crashes[:10])
    assert res.slowest < HANG_S and res.rejected > CASES // 2, res.summary()


def _npy_with_header(header: bytes, body: bytes = b"") -> bytes:
    header = header + b" " * (-(len(header) + 11) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + body


def _pcd_lzf(csize: int, usize: int, comp: bytes) -> bytes:
    head = b"VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH 1\nHEIGHT 1\nPOINTS 1\n"
    return head + b"DATA binary_compressed\n" + struct.pack("<II", csize, usize) + comp


SPLAT_HEAD = b"ply\nformat binary_little_endian 1.0\nelement vertex 1\n"
SPLAT_PROPS = b"".join(b"property float %s\n" % p.encode() for p in
                       ("x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2",
                        "rot_0", "rot_1", "rot_2", "rot_3"))  # fmt: skip

REGRESSIONS = {
    # NumPy's header parser raised tokenize.TokenError on an unterminated string in the header dict
    "npy_token_error.npy": (read_points, _npy_with_header(b"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 3, }", bytes(24))),
    # a header promising 10^12 x 3 doubles made NumPy allocate 24 TB (MemoryError) before reading any data
    "npy_huge_shape.npy": (read_points, _npy_with_header(b"{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 3), }", bytes(24))),
    # an impossible decompressed size (4 GB from 2 bytes) made python-lzf segfault when the allocation failed
    "lzf_huge_size.pcd": (read_points, _pcd_lzf(2, 0xFFFFFFF0, b"\x00\x00")),
    # splat PLY header lines cut short / not numbers / a property twice: IndexError and ValueError
    "splat_short_element.ply": (read_splat, b"ply\nformat binary_little_endian 1.0\nelement vertex\nend_header\n"),
    "splat_bad_count.ply": (read_splat, b"ply\nformat ascii 1.0\nelement vertex 1e308\nend_header\n"),
    "splat_short_property.ply": (read_splat, SPLAT_HEAD + b"property float\nend_header\n"),
    "splat_twice.ply": (read_splat, SPLAT_HEAD + SPLAT_PROPS + b"property float x\nend_header\n" + bytes(60)),
    "splat_bad_ascii.ply": (read_splat, SPLAT_HEAD.replace(b"binary_little_endian", b"ascii") + SPLAT_PROPS
                            + b"end_header\n" + b"0 " * 13 + b"0.1.2\n"),
    # logs: corrupt gzip / zip / parquet surfaced zlib.error, EOFError, BadZipFile, OSError, ArrowInvalid
    "bad_deflate.csv.gz": (read_log, gzip.compress(b"time,q\n0,1\n")[:12] + b"\xff" * 8),
    "cut.csv.gz": (read_log, gzip.compress(b"time,q\n0,1\n1,2\n")[:-12]),
    "not_gzip.csv.gz": (read_log, b"time,q\n0,1\n"),
    "not_zip.npz": (read_log, b"PK\x03\x04" + bytes(40)),
    "not_parquet.parquet": (read_log, b"PAR1" + bytes(16) + b"PAR1"),
    # genfromtxt's message spans two lines: the error was not one line
    "ragged.csv": (read_log, b"time,q\n0,1\n1,2,3\n"),
}  # fmt: skip


@pytest.mark.parametrize("fname", sorted(REGRESSIONS))
def test_crash_regressions_are_one_line_input_errors(fname, tmp_path):
    reader, data = REGRESSIONS[fname]
    path = tmp_path / fname
    path.write_bytes(data)
    with pytest.raises(InputError) as info:
        reader(path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_npz_with_a_bad_crc_is_an_input_error(tmp_path):
    buf = io.BytesIO()
    np.savez(buf, time=np.arange(4.0))
    raw = bytearray(buf.getvalue())
    raw[raw.index(b"\x93NUMPY") + 60] ^= 0xFF  # a data byte: the zip member's CRC-32 no longer matches
    (tmp_path / "log.npz").write_bytes(bytes(raw))
    with pytest.raises(InputError, match="log.npz"):
        read_log(tmp_path / "log.npz")


def _las_with(offset: int, fmt: str, value: int) -> bytes:
    raw = bytearray(seeds.build({"c.las": seeds.las})["c.las"])
    struct.pack_into(fmt, raw, offset, value)
    return bytes(raw)


@pytest.mark.skipif(not seeds._have("laspy"), reason="laspy (the formats extra) is not installed")
@pytest.mark.parametrize(
    "offset, fmt, value, message",
    [(100, "<I", 4194304, "VLRs"), (247, "<Q", 33554444, "truncated"), (107, "<I", 786432, "truncated")],
)
def test_las_counts_with_no_room_are_refused_before_laspy(offset, fmt, value, message, tmp_path):
    # crashes the fuzzer found in laspy's header handling (docs/reliability.md)
    (tmp_path / "c.las").write_bytes(_las_with(offset, fmt, value))
    with pytest.raises(InputError, match=message):
        read_points(tmp_path / "c.las")


@pytest.mark.skipif(not seeds._have("h5py"), reason="h5py (the formats extra) is not installed")
def test_every_byte_of_an_hdf5_log_flipped_is_read_or_an_input_error(tmp_path):
    # h5py raised RuntimeError ("Object visitation failed"), KeyError and UnicodeDecodeError on flipped bytes
    raw = seeds.build({"log.h5": seeds.log_hdf5})["log.h5"]
    for i in range(0, len(raw), 3):
        (tmp_path / "log.h5").write_bytes(raw[:i] + bytes([raw[i] ^ 0xFF]) + raw[i + 1 :])
        try:
            read_log(tmp_path / "log.h5")
        except InputError as exc:
            assert "\n" not in str(exc)


@pytest.mark.parametrize("reader", [read_points, read_splat, read_log])
def test_a_directory_is_named_as_one(reader, tmp_path):
    d = tmp_path / "adir.ply"
    d.mkdir()
    with pytest.raises(InputError, match="is a directory"):
        reader(d)
