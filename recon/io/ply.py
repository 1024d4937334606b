"""PLY point clouds (ascii, binary little / big endian): the ``vertex`` element's properties."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from real2sim.errors import InputError
from real2sim.recon.io.cloud import PointCloud, cloud_from_fields

_PLY_TYPES = {
    "char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1",
    "short": "i2", "int16": "i2", "ushort": "u2", "uint16": "u2",
    "int": "i4", "int32": "i4", "uint": "u4", "uint32": "u4",
    "float": "f4", "float32": "f4", "double": "f8", "float64": "f8",
}  # fmt: skip


def read_ply(path: Path) -> PointCloud:
    data = path.read_bytes()
    fmt, elements, body_start = _header(path, data)
    body = data[body_start:]
    if fmt == "ascii":
        fields = _ply_ascii_vertices(path, body, elements)
    else:
        fields = _ply_binary_vertices(path, body, elements, "<" if fmt == "binary_little_endian" else ">")
    return cloud_from_fields(fields, path)


def _header(path: Path, data: bytes) -> tuple[str, list, int]:
    """``(format, elements, offset of the body)`` of a PLY file starting with ``data``; elements are
    ``(name, count, [(property, dtype, list count dtype or None)])``."""
    end = data.find(b"end_header")
    if not data.startswith(b"ply") or end < 0:
        raise InputError(path, "not a PLY file (no 'ply' magic or no 'end_header')")
    nl = data.find(b"\n", end)
    body_start = len(data) if nl < 0 else nl + 1
    header = data[:end].decode("ascii", errors="replace").splitlines()
    fmt = ""
    elements: list[tuple[str, int, list[tuple[str, str, str | None]]]] = []
    for line in header:
        tok = line.split()
        if not tok:
            continue
        if tok[0] == "format":
            fmt = tok[1]
        elif tok[0] == "element":
            elements.append((tok[1], int(tok[2]), []))
        elif tok[0] == "property":
            if not elements:
                raise InputError(path, "PLY property before any element")
            if tok[1] == "list":
                elements[-1][2].append((tok[4], _PLY_TYPES[tok[3]], _PLY_TYPES[tok[2]]))
            else:
                elements[-1][2].append((tok[2], _PLY_TYPES[tok[1]], None))
    if fmt not in ("ascii", "binary_little_endian", "binary_big_endian"):
        raise InputError(path, f"unknown PLY format {fmt!r}")
    if not any(e[0] == "vertex" for e in elements):
        raise InputError(path, "PLY file has no 'vertex' element")
    return fmt, elements, body_start


HEAD_BYTES = 1 << 20
"""How much of a file ``ply_vertex_layout`` reads to find the header."""


def ply_vertex_layout(path: Path) -> tuple[int, np.dtype, int] | None:
    """``(byte offset, record dtype, count)`` of the vertex records of a binary PLY whose vertices come first or
    after fixed-size elements, so they can be read in chunks; None for any other PLY (``read_ply`` reads those)."""
    with open(path, "rb") as f:
        head = f.read(HEAD_BYTES)
    if len(head) == HEAD_BYTES and b"end_header" not in head:
        return None  # a header longer than HEAD_BYTES: read_ply reads the file whole
    fmt, elements, offset = _header(path, head)
    if fmt == "ascii":
        return None
    endian = "<" if fmt == "binary_little_endian" else ">"
    for name, count, props in elements:
        if any(p[2] is not None for p in props):
            return None
        dt = np.dtype([(p[0], endian + p[1]) for p in props])
        if name == "vertex":
            need = offset + dt.itemsize * count
            if path.stat().st_size < need:
                raise InputError(
                    path, f"truncated: vertex data needs {need - offset} bytes after the header, has "
                    f"{path.stat().st_size - offset}"
                )  # fmt: skip
            return offset, dt, count
        offset += dt.itemsize * count
    return None


def iter_ply_vertices(
    path: Path, layout: tuple[int, np.dtype, int], chunk: int
) -> Iterator[dict[str, np.ndarray]]:
    """The vertex fields of a binary PLY (``layout`` from ``ply_vertex_layout``), ``chunk`` records at a time, read
    into one reused buffer (memory stays at one chunk)."""
    offset, dt, count = layout
    buf = bytearray(dt.itemsize * min(chunk, max(count, 1)))
    with open(path, "rb") as f:
        f.seek(offset)
        done = 0
        while done < count:
            n = min(chunk, count - done)
            view = memoryview(buf)[: n * dt.itemsize]
            if f.readinto(view) != len(view):
                raise InputError(path, "truncated: the vertex data ends early")
            rec = np.frombuffer(view, dtype=dt, count=n)
            yield {name: rec[name].astype(dt[name].newbyteorder("=")) for name in dt.names or ()}
            done += n


def _ply_ascii_vertices(path: Path, body: bytes, elements: list) -> dict[str, np.ndarray]:
    lines = body.split(b"\n")
    row = 0
    for name, count, props in elements:
        if name != "vertex":
            row += count  # one line per element entry, lists included
            continue
        if any(p[2] is not None for p in props):
            raise InputError(path, "PLY vertex element with list properties is not supported")
        block = [ln for ln in lines[row : row + count]]
        if len(block) < count or (count and not block[-1].strip()):
            raise InputError(path, f"truncated: expected {count} vertex lines, found fewer")
        arr = np.array(b" ".join(block).split(), dtype=np.float64)
        if arr.size != count * len(props):
            raise InputError(
                path, f"truncated or malformed vertex data ({arr.size} values for {count} vertices)"
            )
        arr = arr.reshape(count, len(props))
        return {p[0]: arr[:, i].astype(p[1]) for i, p in enumerate(props)}
    raise InputError(path, "PLY file has no 'vertex' element")


def _ply_binary_vertices(path: Path, body: bytes, elements: list, endian: str) -> dict[str, np.ndarray]:
    offset = 0
    for name, count, props in elements:
        has_list = any(p[2] is not None for p in props)
        if name == "vertex":
            if has_list:
                raise InputError(path, "PLY vertex element with list properties is not supported")
            dt = np.dtype([(p[0], endian + p[1]) for p in props])
            need = offset + dt.itemsize * count
            if len(body) < need:
                raise InputError(
                    path, f"truncated: vertex data needs {need} bytes after the header, has {len(body)}"
                )
            rec = np.frombuffer(body, dtype=dt, count=count, offset=offset)
            return {p[0]: rec[p[0]].astype(p[1]) for p in props}
        if not has_list:
            offset += np.dtype([(p[0], endian + p[1]) for p in props]).itemsize * count
            continue
        for _ in range(count):  # rare: a list element before the vertices; walk it entry by entry
            for _pname, ptype, ltype in props:
                if ltype is None:
                    offset += np.dtype(ptype).itemsize
                else:
                    n = int(np.frombuffer(body, dtype=endian + ltype, count=1, offset=offset)[0])
                    offset += np.dtype(ltype).itemsize + n * np.dtype(ptype).itemsize
    raise InputError(path, "PLY file has no 'vertex' element")
