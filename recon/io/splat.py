"""3D Gaussian splat PLY reader: the INRIA 3DGS layout, nerfstudio's ``ns-export gaussian-splat`` and SuperSplat's
uncompressed export (all share the property names ``x y z f_dc_0..2 [f_rest_*] opacity scale_0..2 rot_0..3``).

Stored values are the raw parameters: opacity is a logit, scales are logs, ``rot`` is an unnormalised ``w x y z``
quaternion and ``f_dc`` the degree-0 spherical-harmonic coefficient. ``read_splat`` returns them activated.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from real2sim.errors import InputError
from real2sim.recon.io.cloud import reading

SH_C0 = 0.28209479177387814
REQUIRED = ("x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2",
            "rot_0", "rot_1", "rot_2", "rot_3")  # fmt: skip
_TYPES = {
    "char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1", "short": "i2", "int16": "i2", "ushort": "u2",
    "uint16": "u2", "int": "i4", "int32": "i4", "uint": "u4", "uint32": "u4", "float": "f4", "float32": "f4",
    "double": "f8", "float64": "f8",
}  # fmt: skip


@dataclass(frozen=True)
class GaussianSplat:
    """Activated Gaussians: ``means`` (N, 3), ``scales`` (N, 3) standard deviations (same unit as means),
    ``rotations`` (N, 4) unit ``w x y z``, ``opacities`` (N,) in 0..1, ``colors`` (N, 3) RGB 0..1 from SH DC."""

    means: np.ndarray
    scales: np.ndarray
    rotations: np.ndarray
    opacities: np.ndarray
    colors: np.ndarray
    source: str = ""

    def __len__(self) -> int:
        return len(self.means)

    def subset(self, mask: np.ndarray) -> GaussianSplat:
        return GaussianSplat(self.means[mask], self.scales[mask], self.rotations[mask], self.opacities[mask],
                             self.colors[mask], self.source)  # fmt: skip

    def rotation_matrices(self) -> np.ndarray:
        """(N, 3, 3) rotation matrices of the unit ``wxyz`` quaternions."""
        w, x, y, z = self.rotations.T
        return np.stack(
            [
                np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
            ],
            axis=1,
        )


def _parse_header(path: Path, raw: bytes) -> tuple[str, list[tuple[str, int, list[tuple[str, str]]]], int]:
    end = raw.find(b"end_header")
    if not raw.startswith(b"ply") or end < 0:
        raise InputError(path, "not a PLY file (no 'ply' magic / 'end_header')")
    nl = raw.find(b"\n", end)
    header = raw[:end].decode("ascii", errors="replace").splitlines()
    fmt = ""
    elements: list[tuple[str, int, list[tuple[str, str]]]] = []
    for line in header:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "format":
            fmt = parts[1]
        elif parts[0] == "element":
            elements.append((parts[1], int(parts[2]), []))
        elif parts[0] == "property":
            if not elements:
                raise InputError(path, "malformed PLY header (property before element)")
            if parts[1] == "list":
                elements[-1][2].append((parts[-1], "list"))
            else:
                if parts[1] not in _TYPES:
                    raise InputError(path, f"unknown PLY property type {parts[1]!r}")
                elements[-1][2].append((parts[2], _TYPES[parts[1]]))
    return fmt, elements, nl + 1


def read_splat_raw(path: str | Path) -> dict[str, np.ndarray]:
    """The ``vertex`` properties of a splat PLY as float64 arrays (raw, not activated)."""
    path = Path(path)
    if path.is_dir():
        raise InputError(path, "is a directory, not a splat PLY file")
    if not path.is_file():
        raise InputError(path, "no such splat file")
    with reading(path, "splat PLY"):
        return _read_splat_raw(path)


def _read_splat_raw(path: Path) -> dict[str, np.ndarray]:
    raw = path.read_bytes()
    fmt, elements, offset = _parse_header(path, raw)
    names = [e[0] for e in elements]
    if "chunk" in names or any(p[0].startswith("packed_") for e in elements for p in e[2]):
        raise InputError(path, "compressed SuperSplat PLY; export it uncompressed (SuperSplat: Export > PLY)")
    if "vertex" not in names:
        raise InputError(path, "no 'vertex' element: not a Gaussian splat PLY")
    vi = names.index("vertex")
    for e in elements[:vi]:
        if e[1] > 0:
            raise InputError(path, f"element {e[0]!r} before 'vertex' is not supported in a splat PLY")
    _, count, props = elements[vi]
    if any(t == "list" for _, t in props):
        raise InputError(path, "list properties in 'vertex' are not supported in a splat PLY")
    have = [p for p, _ in props]
    for req in REQUIRED:
        if req not in have:
            raise InputError(path, f"missing property {req!r} (a 3DGS splat PLY needs {' '.join(REQUIRED)})")
    if fmt == "ascii":
        body = raw[offset:].decode("ascii", errors="replace").split()
        need = count * len(props)
        if len(body) < need:
            raise InputError(
                path, f"truncated: {len(body)} values for {count} vertices x {len(props)} properties"
            )
        arr = np.array(body[:need], dtype=np.float64).reshape(count, len(props))
        data = {p: arr[:, i] for i, p in enumerate(have)}
    elif fmt in ("binary_little_endian", "binary_big_endian"):
        endian = "<" if fmt == "binary_little_endian" else ">"
        dt = np.dtype([(p, endian + t) for p, t in props])
        if len(raw) - offset < count * dt.itemsize:
            raise InputError(
                path, f"truncated: {len(raw) - offset} bytes for {count} vertices of {dt.itemsize}"
            )
        rec = np.frombuffer(raw, dtype=dt, count=count, offset=offset)
        data = {p: rec[p].astype(np.float64) for p in have}
    else:
        raise InputError(path, f"unknown PLY format {fmt!r}")
    if count == 0:
        raise InputError(path, "holds no Gaussians")
    for req in REQUIRED:
        if not np.all(np.isfinite(data[req])):
            raise InputError(path, f"property {req!r} has NaN or infinite values")
    return data


def activate(data: dict[str, np.ndarray], source: str = "") -> GaussianSplat:
    """Raw 3DGS parameters → ``GaussianSplat`` (sigmoid opacity, exp scales, unit wxyz, SH DC → RGB)."""
    means = np.stack([data["x"], data["y"], data["z"]], 1)
    scales = np.exp(np.clip(np.stack([data[f"scale_{i}"] for i in range(3)], 1), -30, 30))
    q = np.stack([data[f"rot_{i}"] for i in range(4)], 1)
    norm = np.linalg.norm(q, axis=1, keepdims=True)
    q = np.where(norm > 0, q / np.where(norm > 0, norm, 1), np.array([1.0, 0, 0, 0]))
    q *= np.where(q[:, :1] < 0, -1.0, 1.0)  # canonical sign: w >= 0
    opac = 1.0 / (1.0 + np.exp(-np.clip(data["opacity"], -60, 60)))
    rgb = np.clip(0.5 + SH_C0 * np.stack([data[f"f_dc_{i}"] for i in range(3)], 1), 0.0, 1.0)
    return GaussianSplat(means, scales, q, opac, rgb, source)


def read_splat(path: str | Path) -> GaussianSplat:
    """Read and activate a 3DGS PLY; every problem is one ``InputError`` naming the file."""
    data = read_splat_raw(path)
    with np.errstate(all="ignore"):
        return activate(data, str(path))


def write_splat(path: str | Path, splat: GaussianSplat) -> None:
    """Write an INRIA-layout binary PLY (SH degree 0) from activated values (inverse activations)."""
    from real2sim.atomic import write_bytes

    n = len(splat)
    props = ["x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2", "opacity",
             "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"]  # fmt: skip
    o = np.clip(splat.opacities, 1e-7, 1 - 1e-7)
    cols = [splat.means, np.zeros((n, 3)), (splat.colors - 0.5) / SH_C0, np.log(o / (1 - o))[:, None],
            np.log(splat.scales), splat.rotations]  # fmt: skip
    arr = np.concatenate(cols, axis=1).astype("<f4")
    head = "ply\nformat binary_little_endian 1.0\n" + f"element vertex {n}\n"
    head += "".join(f"property float {p}\n" for p in props) + "end_header\n"
    write_bytes(path, head.encode("ascii") + arr.tobytes())
