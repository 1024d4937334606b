"""Deterministic Wavefront OBJ writing (fixed float format, optional per-vertex colour ``v x y z r g b``)."""

from __future__ import annotations

import numpy as np

FLOAT = "{:.9g}"
"""Vertex coordinate format (9 significant digits: sub-nanometre at object scale)."""


def obj_text(
    vertices: np.ndarray, faces: np.ndarray, colors: np.ndarray | None = None, header: str = ""
) -> str:
    """OBJ text of a triangle mesh; ``colors`` (N,3|4) uint8 are written as 0-1 floats after the position.

    Formatted with one ``%`` over all numbers (faster than a per-number ``str.format`` loop); ``+ 0.0`` turns
    ``-0.0`` into ``0.0`` so the text does not depend on the sign of zero."""
    v = np.asarray(vertices, dtype=np.float64) + 0.0
    f = np.asarray(faces, dtype=np.int64) + 1
    head = f"# {header}\n" if header else ""
    if colors is not None:
        c = np.asarray(colors, dtype=np.float64)[:, :3] / 255.0
        rows = np.hstack([v, c])
        vtext = ("v %.9g %.9g %.9g %.4f %.4f %.4f\n" * len(rows)) % tuple(rows.ravel().tolist())
    else:
        vtext = ("v %.9g %.9g %.9g\n" * len(v)) % tuple(v.ravel().tolist())
    ftext = ("f %d %d %d\n" * len(f)) % tuple(f.ravel().tolist())
    return head + vtext + ftext
