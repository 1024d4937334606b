"""PCD point clouds (Point Cloud Library): ``ascii``, ``binary`` and ``binary_compressed`` (LZF) data."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from real2sim.atomic import write_bytes
from real2sim.errors import InputError
from real2sim.recon.io.cloud import PointCloud, cloud_from_fields
from real2sim.recon.io.lzf import lzf_decompress

_PCD_TYPES = {("F", 4): "f4", ("F", 8): "f8", ("U", 1): "u1", ("U", 2): "u2", ("U", 4): "u4", ("U", 8): "u8",
              ("I", 1): "i1", ("I", 2): "i2", ("I", 4): "i4", ("I", 8): "i8"}  # fmt: skip


def read_pcd(path: Path) -> PointCloud:
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
    cloud = cloud_from_fields(fields, path)
    if width * height != npts or width < 1 or height < 1:
        raise InputError(path, f"PCD header WIDTH {width} x HEIGHT {height} is not POINTS {npts}")
    # VIEWPOINT: the sensor's pose (tx ty tz qw qx qy qz); absent, the file does not say where the sensor was
    so = _viewpoint(hdr["VIEWPOINT"], path) if "VIEWPOINT" in hdr else None
    return PointCloud(
        points=cloud.points,
        colors=cloud.colors,
        normals=cloud.normals,
        labels=cloud.labels,
        intensity=cloud.intensity,
        sensor_origin=so,
        width=width,
        height=height,
        source=str(path),
    )


def _viewpoint(tokens: list[str], path: Path) -> np.ndarray:
    """The sensor origin of a ``VIEWPOINT tx ty tz qw qx qy qz`` line: seven finite numbers, a unit quaternion."""
    try:
        v = np.array([float(t) for t in tokens], dtype=np.float64)
    except ValueError:
        v = np.array([np.nan])
    if v.shape != (7,) or not np.all(np.isfinite(v)) or abs(float(np.linalg.norm(v[3:])) - 1.0) > 1e-3:
        raise InputError(
            path,
            f"PCD VIEWPOINT must be 7 finite numbers 'tx ty tz qw qx qy qz' (unit quaternion), got {' '.join(tokens)!r}",
        )
    return v[:3]


def write_pcd(path: str | Path, cloud: PointCloud) -> None:
    """Write ``cloud`` as a binary PCD (x y z, packed rgb and label when present; organised when ``width`` x
    ``height`` is its size), its single sensor origin as the ``VIEWPOINT`` (none: no VIEWPOINT line)."""
    n = len(cloud)
    cols: list[tuple[str, np.ndarray]] = [(k, cloud.points[:, i].astype("<f4")) for i, k in enumerate("xyz")]
    if cloud.colors is not None:
        c = np.clip(np.round(np.asarray(cloud.colors) * 255), 0, 255).astype(np.uint32)
        cols.append(("rgb", ((c[:, 0] << 16) | (c[:, 1] << 8) | c[:, 2]).astype("<u4")))
    if cloud.labels is not None:
        cols.append(("label", np.asarray(cloud.labels).astype("<u4")))
    rec = np.empty(n, dtype=[(k, v.dtype) for k, v in cols])
    for k, v in cols:
        rec[k] = v
    w, h = (cloud.width, cloud.height) if cloud.width * cloud.height == n else (n, 1)
    so = cloud.sensor_origin
    if so is not None and np.ndim(so) != 1:
        raise ValueError("a PCD VIEWPOINT holds one sensor origin; got one per point")
    hdr = ["VERSION 0.7", "FIELDS " + " ".join(k for k, _ in cols), "SIZE " + " ".join("4" for _ in cols),
           "TYPE " + " ".join("F" if v.dtype.kind == "f" else "U" for _, v in cols),
           "COUNT " + " ".join("1" for _ in cols), f"WIDTH {w}", f"HEIGHT {h}"]  # fmt: skip
    if so is not None:
        hdr.append("VIEWPOINT " + " ".join(repr(float(x)) for x in so) + " 1 0 0 0")
    hdr += [f"POINTS {n}", "DATA binary"]
    write_bytes(path, ("\n".join(hdr) + "\n").encode("ascii") + rec.tobytes())
