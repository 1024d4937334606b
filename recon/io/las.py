"""LAS / LAZ point clouds through ``laspy`` (the optional ``formats`` extra)."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from real2sim.errors import InputError
from real2sim.recon.io.cloud import PointCloud, cloud_from_fields, missing_extra

LAZ_RATIO_MAX = 50
"""Most a LAZ file's points expand (LASzip reaches 7-20x on real scans)."""
POINT_BUDGET = 4 << 30
"""Most bytes of point records read from one LAS/LAZ file (4 GiB, some 120 million points)."""


def _check_header(path: Path) -> None:
    """Refuse counts the file has no room for, before laspy walks or allocates them (docs/reliability.md)."""
    with open(path, "rb") as f:
        head = f.read(375)
    size = path.stat().st_size
    if len(head) < 227 or not head.startswith(b"LASF"):
        raise InputError(path, "not a LAS/LAZ file (no 'LASF' signature or a header shorter than 227 bytes)")
    header_size, point_offset, nvlr = struct.unpack_from("<HII", head, 94)
    room = max(0, min(point_offset, size) - header_size)
    if nvlr * 54 > room:  # each VLR has a 54-byte header
        raise InputError(path, f"header says {nvlr} VLRs; there are {room} bytes for them")
    fmt, record, count = struct.unpack_from("<BHI", head, 104)
    if head[25] >= 4 and len(head) >= 255:  # LAS 1.4: extended VLRs at the end, a 64-bit point count
        evlr_start, nevlr, count64 = struct.unpack_from("<QIQ", head, 235)
        if nevlr and nevlr * 60 > max(0, size - evlr_start):
            raise InputError(path, f"header says {nevlr} extended VLRs; the file has no room for them")
        count = max(count, count64)
    if not fmt & 0x80 and count * record > max(0, size - point_offset):  # uncompressed LAS (LAZ sets bit 7)
        raise InputError(
            path, f"truncated: header says {count} points of {record} bytes, the file holds fewer"
        )
    if fmt & 0x80 and count * record > LAZ_RATIO_MAX * max(1, size - point_offset):
        # LAZ: lazrs allocates what the header says before it decompresses (and aborts the process if it cannot)
        raise InputError(
            path,
            f"header says {count} points ({count * record >> 20} MiB) in {max(0, size - point_offset)} bytes of "
            f"compressed data; LAZ compresses at most {LAZ_RATIO_MAX}x: corrupt header",
        )
    if count * record > POINT_BUDGET:
        raise InputError(path, f"header says {count} points ({count * record >> 20} MiB); at most "
                               f"{POINT_BUDGET >> 20} MiB of point records are read")  # fmt: skip


def read_las(path: Path) -> PointCloud:
    try:
        import laspy
    except ImportError:
        raise missing_extra(path, "laspy") from None
    _check_header(path)
    try:
        las = laspy.read(str(path))
    except Exception as exc:  # laspy raises its own error types for malformed files
        raise InputError(path, f"not a readable LAS/LAZ file ({str(exc) or type(exc).__name__})") from None
    fields: dict[str, np.ndarray] = {"x": np.asarray(las.x), "y": np.asarray(las.y), "z": np.asarray(las.z)}
    dims = set(las.point_format.dimension_names)
    if "intensity" in dims:
        fields["intensity"] = np.asarray(las.intensity)
    if {"red", "green", "blue"} <= dims:
        fields.update(red=np.asarray(las.red), green=np.asarray(las.green), blue=np.asarray(las.blue))
    if "classification" in dims:
        fields["classification"] = np.asarray(las.classification)
    return cloud_from_fields(fields, path)
