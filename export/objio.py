"""Deterministic Wavefront OBJ writing (fixed float format, optional per-vertex colour ``v x y z r g b``)."""

from __future__ import annotations

import numpy as np

FLOAT = "{:.9g}"


def obj_text(vertices: np.ndarray, faces: np.ndarray, colors: np.ndarray | None = None, header: str = "") -> str:
    """OBJ text of a triangle mesh; ``colors`` (N,3|4) uint8 are written as 0-1 floats after the position."""
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64) + 1
    lines = [f"# {header}"] if header else []
    if colors is not None:
        c = np.asarray(colors, dtype=np.float64)[:, :3] / 255.0
        for p, q in zip(v, c, strict=True):
            lines.append(
                "v "
                + " ".join(FLOAT.format(x + 0.0) for x in p)
                + " "
                + " ".join(f"{x:.4f}" for x in q)
            )
    else:
        lines.extend("v " + " ".join(FLOAT.format(x + 0.0) for x in p) for p in v)
    lines.extend(f"f {a} {b} {c}" for a, b, c in f)
    return "\n".join(lines) + "\n"
