"""Point-cloud readers: PLY, PCD (ascii / binary / binary_compressed), XYZ/PTS/TXT, NPY, KITTI .bin, LAS/LAZ, E57.

Every reader returns a :class:`PointCloud` in metres. Organised clouds (PCD with HEIGHT > 1) keep their invalid
points as NaN rows, so row ``i`` is the ``i``-th point of the file. Every problem with a file is one
:class:`~real2sim.errors.InputError` naming it.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from real2sim.errors import ConfigError, InputError

UNITS = {"m": 1.0, "cm": 0.01, "mm": 0.001}
SUFFIXES = (".ply", ".pcd", ".xyz", ".pts", ".txt", ".npy", ".bin", ".las", ".laz", ".e57")


@dataclass(frozen=True, eq=False)
class PointCloud:
    """Points of one scan (or several merged) in one frame.

    ``points``: (N, 3) float64 [m], NaN rows for invalid points of organised clouds. Optional per-point arrays
    (same N): ``colors`` (N, 3) float in 0..1, ``normals`` (N, 3), ``labels`` int64, ``intensity`` float64.
    ``sensor_origin``: where the sensor was [m] in the cloud's frame, (3,) for one scan or (N, 3) per point for
    merged scans; ``None`` when unknown. ``width``/``height``: the organised grid (``height == 1`` when not
    organised). ``source``: the file (or a description) the points came from.
    """

    points: np.ndarray
    colors: np.ndarray | None = None
    normals: np.ndarray | None = None
    labels: np.ndarray | None = None
    intensity: np.ndarray | None = None
    sensor_origin: np.ndarray | None = None
    width: int = 0
    height: int = 1
    source: str = ""

    def __len__(self) -> int:
        return len(self.points)

    def valid_mask(self) -> np.ndarray:
        """Rows whose three coordinates are finite."""
        return np.all(np.isfinite(self.points), axis=1)

    def origins(self) -> np.ndarray | None:
        """Per-point sensor origins (N, 3), or ``None`` when unknown."""
        if self.sensor_origin is None:
            return None
        o = np.asarray(self.sensor_origin, dtype=np.float64)
        return np.broadcast_to(o, self.points.shape) if o.ndim == 1 else o

    def transformed(self, b_from_a: np.ndarray) -> PointCloud:
        """The same cloud with points, normals and sensor origins mapped by the 4x4 ``b_from_a``."""
        R, t = b_from_a[:3, :3], b_from_a[:3, 3]
        so = None
        if self.sensor_origin is not None:
            so = np.asarray(self.sensor_origin, dtype=np.float64) @ R.T + t
        return PointCloud(
            points=self.points @ R.T + t,
            colors=self.colors,
            normals=None if self.normals is None else self.normals @ R.T,
            labels=self.labels,
            intensity=self.intensity,
            sensor_origin=so,
            width=self.width,
            height=self.height,
            source=self.source,
        )

    def subset(self, idx: np.ndarray) -> PointCloud:
        """Rows ``idx`` (indices or boolean mask); the result is unorganised."""

        def pick(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[idx]

        so = self.sensor_origin
        if so is not None and np.ndim(so) == 2:
            so = so[idx]
        return PointCloud(
            points=self.points[idx],
            colors=pick(self.colors),
            normals=pick(self.normals),
            labels=pick(self.labels),
            intensity=pick(self.intensity),
            sensor_origin=so,
            width=0,
            height=1,
            source=self.source,
        )


def merge_clouds(clouds: list[PointCloud], source: str = "") -> PointCloud:
    """Concatenate clouds already in one frame; optional arrays are kept only when every cloud has them."""

    def cat(name: str) -> np.ndarray | None:
        arrs = [getattr(c, name) for c in clouds]
        return None if any(a is None for a in arrs) else np.concatenate(arrs)

    origins = [c.origins() for c in clouds]
    so = None if any(o is None for o in origins) else np.concatenate([np.asarray(o) for o in origins])
    return PointCloud(
        points=np.concatenate([c.points for c in clouds]),
        colors=cat("colors"),
        normals=cat("normals"),
        labels=cat("labels"),
        intensity=cat("intensity"),
        sensor_origin=so,
        source=source or "+".join(c.source for c in clouds),
    )


def unit_scale(units: str) -> float:
    if units not in UNITS:
        raise ConfigError(f"units must be one of {', '.join(UNITS)}; got {units!r}")
    return UNITS[units]


def read_points(path: str | Path, units: str = "m") -> PointCloud:
    """Read a point cloud file; ``units`` says what one file unit is (``m``, ``cm`` or ``mm``)."""
    scale = unit_scale(units)
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such file")
    suffix = path.suffix.lower()
    readers = {
        ".ply": _read_ply,
        ".pcd": _read_pcd,
        ".xyz": _read_text,
        ".pts": _read_text,
        ".txt": _read_text,
        ".npy": _read_npy,
        ".bin": _read_kitti,
        ".las": _read_las,
        ".laz": _read_las,
        ".e57": _read_e57,
    }
    if suffix not in readers:
        raise InputError(path, f"unsupported point-cloud format {suffix!r}; supported: {', '.join(SUFFIXES)}")
    try:
        cloud = readers[suffix](path)
    except InputError:
        raise
    except (ValueError, IndexError, KeyError, struct.error, UnicodeDecodeError, OverflowError) as exc:
        raise InputError(path, f"malformed {suffix[1:].upper()} file ({exc})") from None
    pts = np.asarray(cloud.points, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[1] != 3:
        raise InputError(path, f"expected (N, 3) points, got shape {pts.shape}")
    if len(pts) == 0:
        raise InputError(path, "the file holds no points")
    if not np.isfinite(pts).all(axis=1).any():
        raise InputError(path, f"all {len(pts)} points are invalid (NaN or infinite)")
    so = cloud.sensor_origin
    return PointCloud(
        points=pts * scale,
        colors=cloud.colors,
        normals=cloud.normals,
        labels=cloud.labels,
        intensity=cloud.intensity,
        sensor_origin=None if so is None else np.asarray(so, dtype=np.float64) * scale,
        width=cloud.width,
        height=cloud.height,
        source=str(path),
    )


# ----------------------------------------------------------------------------------------------- helpers
def _colors_from_fields(fields: dict[str, np.ndarray]) -> np.ndarray | None:
    for names in (
        ("red", "green", "blue"),
        ("r", "g", "b"),
        ("diffuse_red", "diffuse_green", "diffuse_blue"),
    ):
        if all(n in fields for n in names):
            c = np.stack([fields[n].astype(np.float64) for n in names], axis=1)
            peak = np.nanmax(c) if c.size else 0.0
            # Integer colours are 0..255 (or 0..65535 for 16-bit LAS); float colours already 0..1.
            if np.issubdtype(fields[names[0]].dtype, np.integer) or peak > 1.0:
                c = c / (65535.0 if peak > 255 else 255.0)
            return np.clip(c, 0.0, 1.0)
    return None


def _normals_from_fields(fields: dict[str, np.ndarray]) -> np.ndarray | None:
    if all(n in fields for n in ("nx", "ny", "nz")):
        return np.stack([fields[n].astype(np.float64) for n in ("nx", "ny", "nz")], axis=1)
    if all(n in fields for n in ("normal_x", "normal_y", "normal_z")):
        return np.stack([fields[n].astype(np.float64) for n in ("normal_x", "normal_y", "normal_z")], axis=1)
    return None


def _cloud_from_fields(fields: dict[str, np.ndarray], path: Path) -> PointCloud:
    if not all(k in fields for k in ("x", "y", "z")):
        raise InputError(path, f"no x, y, z fields (found: {', '.join(fields) or 'none'})")
    pts = np.stack([fields[k].astype(np.float64) for k in ("x", "y", "z")], axis=1)
    labels = None
    for key in ("label", "labels", "class", "classification", "scalar_label"):
        if key in fields:
            labels = fields[key].astype(np.int64)
            break
    intensity = None
    for key in ("intensity", "scalar_intensity", "reflectance"):
        if key in fields:
            intensity = fields[key].astype(np.float64)
            break
    return PointCloud(
        points=pts,
        colors=_colors_from_fields(fields),
        normals=_normals_from_fields(fields),
        labels=labels,
        intensity=intensity,
        source=str(path),
    )


# ------------------------------------------------------------------------------------------------- PLY
_PLY_TYPES = {
    "char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1",
    "short": "i2", "int16": "i2", "ushort": "u2", "uint16": "u2",
    "int": "i4", "int32": "i4", "uint": "u4", "uint32": "u4",
    "float": "f4", "float32": "f4", "double": "f8", "float64": "f8",
}  # fmt: skip


def _read_ply(path: Path) -> PointCloud:
    data = path.read_bytes()
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
    body = data[body_start:]
    if fmt == "ascii":
        fields = _ply_ascii_vertices(path, body, elements)
    else:
        fields = _ply_binary_vertices(path, body, elements, "<" if fmt == "binary_little_endian" else ">")
    return _cloud_from_fields(fields, path)


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


# ------------------------------------------------------------------------------------------------- PCD
def lzf_decompress(src: bytes, out_len: int) -> bytes:
    """Decompress one LZF block (liblzf's format, as PCD ``binary_compressed`` stores it): with the C library of
    the ``python-lzf`` package when installed, else in pure Python (same result, about 100x slower)."""
    try:
        import lzf
    except ImportError:
        return lzf_decompress_py(src, out_len)
    out = lzf.decompress(bytes(src), out_len + 1) if out_len else b""
    if out is None or len(out) != out_len:
        # corrupt data or a size mismatch: the pure-Python decoder says precisely what is wrong
        return lzf_decompress_py(src, out_len)
    return out


def lzf_decompress_py(src: bytes, out_len: int) -> bytes:
    """Pure-Python LZF decoder (the reference for ``lzf_decompress``)."""
    out = bytearray(out_len)
    ip, op, n = 0, 0, len(src)
    while ip < n:
        ctrl = src[ip]
        ip += 1
        if ctrl < 32:  # literal run of ctrl + 1 bytes
            ln = ctrl + 1
            if ip + ln > n or op + ln > out_len:
                raise ValueError("LZF literal run past the end of the data")
            out[op : op + ln] = src[ip : ip + ln]
            ip += ln
            op += ln
        else:  # back reference
            ln = ctrl >> 5
            if ln == 7:
                ln += src[ip]
                ip += 1
            ref = op - ((ctrl & 0x1F) << 8) - src[ip] - 1
            ip += 1
            ln += 2
            if ref < 0 or op + ln > out_len:
                raise ValueError("LZF back reference outside the data")
            if op - ref >= ln:
                out[op : op + ln] = out[ref : ref + ln]
            else:  # overlapping copy: repeat the period
                period = op - ref
                chunk = bytes(out[ref:op])
                reps = -(-ln // period)
                out[op : op + ln] = (chunk * reps)[:ln]
            op += ln
    if op != out_len:
        raise ValueError(f"LZF data decompressed to {op} bytes, header says {out_len}")
    return bytes(out)


_PCD_TYPES = {("F", 4): "f4", ("F", 8): "f8", ("U", 1): "u1", ("U", 2): "u2", ("U", 4): "u4", ("U", 8): "u8",
              ("I", 1): "i1", ("I", 2): "i2", ("I", 4): "i4", ("I", 8): "i8"}  # fmt: skip


def _read_pcd(path: Path) -> PointCloud:
    data = path.read_bytes()
    hdr: dict[str, list[str]] = {}
    pos = 0
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0:
            raise InputError(path, "truncated PCD header (no DATA line)")
        line = data[pos:nl].decode("ascii", errors="replace").strip()
        pos = nl + 1
        if not line or line.startswith("#"):
            continue
        tok = line.split()
        hdr[tok[0].upper()] = tok[1:]
        if tok[0].upper() == "DATA":
            break
    for key in ("FIELDS", "SIZE", "TYPE", "POINTS", "DATA"):
        if key not in hdr:
            raise InputError(path, f"PCD header has no {key} line")
    names = hdr["FIELDS"]
    sizes = [int(s) for s in hdr["SIZE"]]
    types = hdr["TYPE"]
    counts = [int(c) for c in hdr.get("COUNT", ["1"] * len(names))]
    npts = int(hdr["POINTS"][0])
    width = int(hdr.get("WIDTH", [npts])[0])
    height = int(hdr.get("HEIGHT", ["1"])[0])
    if not (len(names) == len(sizes) == len(types) == len(counts)):
        raise InputError(path, "PCD header FIELDS/SIZE/TYPE/COUNT lengths differ")
    dts = [np.dtype(_PCD_TYPES[(t, s)]) for t, s in zip(types, sizes, strict=True)]
    mode = hdr["DATA"][0].lower()
    body = data[pos:]
    cols: dict[str, np.ndarray] = {}
    if mode == "ascii":
        rows = [ln for ln in body.decode("ascii", errors="replace").splitlines() if ln.strip()]
        if len(rows) < npts:
            raise InputError(path, f"truncated: header says {npts} points, found {len(rows)} lines")
        tokens = " ".join(rows[:npts]).split()
        ncol = sum(counts)
        if len(tokens) != npts * ncol:
            raise InputError(path, f"malformed ASCII data ({len(tokens)} values for {npts} points x {ncol})")
        arr = np.array([float("nan") if t.lower() == "nan" else float(t) for t in tokens]).reshape(npts, ncol)
        c0 = 0
        for name, dt, cnt in zip(names, dts, counts, strict=True):
            v = arr[:, c0]
            if name in ("rgb", "rgba"):  # packed colour written as a float or an integer
                if dt.kind == "f":
                    v = v.astype(np.float32).view(np.uint32)
                else:
                    v = v.astype(np.uint32)
                cols[name] = v
            else:
                cols[name] = v.astype(dt) if dt.kind != "f" else v
            c0 += cnt
    elif mode == "binary":
        dt = np.dtype([(n, "<" + d.str[1:], (c,)) if c > 1 else (n, "<" + d.str[1:])
                       for n, d, c in zip(names, dts, counts, strict=True)])  # fmt: skip
        if len(body) < dt.itemsize * npts:
            raise InputError(
                path, f"truncated: binary data needs {dt.itemsize * npts} bytes, has {len(body)}"
            )
        rec = np.frombuffer(body, dtype=dt, count=npts)
        cols = {n: rec[n] if c == 1 else rec[n][:, 0] for n, c in zip(names, counts, strict=True)}
    elif mode == "binary_compressed":
        if len(body) < 8:
            raise InputError(path, "truncated: no compressed-size header after DATA")
        csize, usize = struct.unpack("<II", body[:8])
        if len(body) < 8 + csize:
            raise InputError(
                path, f"truncated: compressed data is {len(body) - 8} bytes, header says {csize}"
            )
        raw = lzf_decompress(body[8 : 8 + csize], usize)
        off = 0
        for name, d, c in zip(names, dts, counts, strict=True):  # field-major layout: all x, then all y, ...
            nbytes = d.itemsize * c * npts
            if off + nbytes > len(raw):
                raise InputError(path, "decompressed data shorter than the fields need")
            a = np.frombuffer(raw, dtype=d.newbyteorder("<"), count=c * npts, offset=off).reshape(npts, c)
            cols[name] = a[:, 0]
            off += nbytes
    else:
        raise InputError(path, f"unknown PCD DATA mode {mode!r} (ascii, binary, binary_compressed)")
    fields = dict(cols)
    for key in ("rgb", "rgba"):
        if key in cols:
            packed = cols[key]
            packed = packed.view(np.uint32) if packed.dtype.kind == "f" else packed.astype(np.uint32)
            fields["red"] = ((packed >> 16) & 255).astype(np.uint8)
            fields["green"] = ((packed >> 8) & 255).astype(np.uint8)
            fields["blue"] = (packed & 255).astype(np.uint8)
    cloud = _cloud_from_fields(fields, path)
    vp = [float(v) for v in hdr.get("VIEWPOINT", ["0", "0", "0", "1", "0", "0", "0"])]
    return PointCloud(
        points=cloud.points,
        colors=cloud.colors,
        normals=cloud.normals,
        labels=cloud.labels,
        intensity=cloud.intensity,
        sensor_origin=np.array(vp[:3]),
        width=width,
        height=height,
        source=str(path),
    )


# ----------------------------------------------------------------------------------------- text / npy / bin
def _read_text(path: Path) -> PointCloud:
    text = path.read_text(encoding="utf-8", errors="strict")
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(("#", "//"))]
    if lines and len(lines[0].split()) == 1 and re.fullmatch(r"\d+", lines[0].strip()):
        lines = lines[1:]  # PTS: first line is the point count
    if not lines:
        raise InputError(path, "the file holds no points")
    rows = [ln.replace(",", " ").split() for ln in lines]
    ncol = len(rows[0])
    if ncol < 3 or any(len(r) != ncol for r in rows):
        bad = next(i for i, r in enumerate(rows) if len(r) != ncol or ncol < 3)
        raise InputError(path, f"line {bad + 1} of the data has {len(rows[bad])} values; every line needs the same "
                               f"number (>= 3: x y z [intensity] [r g b])")  # fmt: skip
    arr = np.array(rows, dtype=np.float64)
    fields: dict[str, np.ndarray] = {"x": arr[:, 0], "y": arr[:, 1], "z": arr[:, 2]}
    if ncol in (4, 7):
        fields["intensity"] = arr[:, 3]
    if ncol in (6, 7):
        rgb = arr[:, ncol - 3 :]
        for k, n in enumerate(("red", "green", "blue")):
            fields[n] = rgb[:, k] if rgb.max() <= 1.0 else np.round(rgb[:, k]).astype(np.int64)
    if ncol == 9:  # x y z r g b nx ny nz
        for k, n in enumerate(("red", "green", "blue")):
            fields[n] = arr[:, 3 + k]
        fields.update(nx=arr[:, 6], ny=arr[:, 7], nz=arr[:, 8])
    return _cloud_from_fields(fields, path)


def _read_npy(path: Path) -> PointCloud:
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise InputError(path, f"not a readable .npy array ({exc})") from None
    if arr.dtype.names:
        return _cloud_from_fields({n: arr[n] for n in arr.dtype.names}, path)
    if arr.ndim != 2 or arr.shape[1] < 3:
        raise InputError(path, f"expected an (N, >=3) array of x y z [...], got shape {arr.shape}")
    fields = {"x": arr[:, 0], "y": arr[:, 1], "z": arr[:, 2]}
    if arr.shape[1] == 4:
        fields["intensity"] = arr[:, 3]
    elif arr.shape[1] >= 6:
        fields.update(red=arr[:, 3], green=arr[:, 4], blue=arr[:, 5])
    return _cloud_from_fields(fields, path)


def _read_kitti(path: Path) -> PointCloud:
    raw = path.read_bytes()
    if len(raw) % 16:
        raise InputError(
            path, f"KITTI .bin size {len(raw)} is not a multiple of 16 bytes (x y z intensity float32)"
        )
    arr = np.frombuffer(raw, dtype="<f4").reshape(-1, 4)
    c = _cloud_from_fields({"x": arr[:, 0], "y": arr[:, 1], "z": arr[:, 2], "intensity": arr[:, 3]}, path)
    return PointCloud(points=c.points, intensity=c.intensity, sensor_origin=np.zeros(3), source=str(path))


def _missing_extra(path: Path, module: str) -> InputError:
    return InputError(
        path, f"reading this format needs the '{module}' package: pip install 'real2sim[formats]'"
    )


def _read_las(path: Path) -> PointCloud:
    try:
        import laspy
    except ImportError:
        raise _missing_extra(path, "laspy") from None
    try:
        las = laspy.read(str(path))
    except Exception as exc:  # laspy raises its own error types for malformed files
        raise InputError(path, f"not a readable LAS/LAZ file ({exc})") from None
    fields: dict[str, np.ndarray] = {"x": np.asarray(las.x), "y": np.asarray(las.y), "z": np.asarray(las.z)}
    dims = set(las.point_format.dimension_names)
    if "intensity" in dims:
        fields["intensity"] = np.asarray(las.intensity)
    if {"red", "green", "blue"} <= dims:
        fields.update(red=np.asarray(las.red), green=np.asarray(las.green), blue=np.asarray(las.blue))
    if "classification" in dims:
        fields["classification"] = np.asarray(las.classification)
    return _cloud_from_fields(fields, path)


def _read_e57(path: Path) -> PointCloud:
    try:
        import pye57
    except ImportError:
        raise _missing_extra(path, "pye57") from None
    try:
        e57 = pye57.E57(str(path))
        scans = []
        for i in range(e57.scan_count):
            d = e57.read_scan(i, colors=False, intensity=False, ignore_missing_fields=True, transform=True)
            scans.append(np.stack([d["cartesianX"], d["cartesianY"], d["cartesianZ"]], axis=1))
    except Exception as exc:  # pye57 raises libE57 errors for malformed files
        raise InputError(path, f"not a readable E57 file ({exc})") from None
    if not scans:
        raise InputError(path, "the E57 file holds no scans")
    pts = np.concatenate(scans)
    return PointCloud(points=pts.astype(np.float64), source=str(path))
