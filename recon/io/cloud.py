"""``PointCloud``, the points of one scan in metres, and the field helpers every reader shares."""

from __future__ import annotations

import contextlib
import struct
import tokenize
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from real2sim.errors import InputError
from real2sim.transforms import times_matrix


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
            so = times_matrix(self.sensor_origin, R.T) + t
        return PointCloud(  # not ``@``: BLAS rounds it differently per CPU kernel
            points=times_matrix(self.points, R.T) + t,
            colors=self.colors,
            normals=None if self.normals is None else times_matrix(self.normals, R.T),
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


def with_sensor_origin(cloud: PointCloud, given: np.ndarray | None, at_origin: bool) -> PointCloud:
    """``cloud`` with its sensor origin settled: ``given`` (the user's, in the cloud's frame [m]) over what the file
    says; the frame's origin when neither says and ``at_origin``; else as read (possibly unknown)."""
    if given is not None:
        return replace(cloud, sensor_origin=np.asarray(given, dtype=np.float64).reshape(3))
    if cloud.sensor_origin is None and at_origin:
        return replace(cloud, sensor_origin=np.zeros(3))
    return cloud


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


def cloud_from_fields(fields: dict[str, np.ndarray], path: Path) -> PointCloud:
    if not all(k in fields for k in ("x", "y", "z")):
        raise InputError(path, f"no x, y, z fields (found: {', '.join(fields) or 'none'})")
    for k, v in fields.items():
        kind = np.asarray(v).dtype.kind
        if kind not in "biuf":
            what = "complex numbers" if kind == "c" else f"values of type {np.asarray(v).dtype}"
            raise InputError(path, f"field {k!r} holds {what}; point fields must be real numbers")
    lengths = {len(np.asarray(v)) for v in fields.values()}
    if len(lengths) > 1:
        raise InputError(path, f"the fields have different lengths ({sorted(lengths)})")
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


def missing_extra(path: Path, module: str) -> InputError:
    return InputError(
        path, f"reading this format needs the '{module}' package: pip install 'real2sim[formats]'"
    )


MALFORMED = (ValueError, IndexError, KeyError, TypeError, struct.error, OverflowError, EOFError, zlib.error,
             tokenize.TokenError, SyntaxError)  # fmt: skip
"""What parsing a corrupt file raises (numpy, struct, int(), LZF, NumPy's header parser); ``reading`` maps them."""


@contextlib.contextmanager
def reading(path: Path, what: str) -> Iterator[None]:
    """Turn the low-level errors of parsing a corrupt file into one single-line ``InputError``."""
    try:
        with np.errstate(all="ignore"):
            yield
    except InputError:
        raise
    except MALFORMED as exc:
        detail = " ".join(str(exc).split())[:200]
        raise InputError(path, f"malformed {what} file ({type(exc).__name__}: {detail})") from None
