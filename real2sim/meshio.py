"""Exact mesh files: binary little-endian PLY with float64 vertices, int32 faces and optional RGBA colours.

Trimesh writes float32 PLY, which loses precision, so scene folders use this writer; any PLY reader loads them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import trimesh
from trimesh.visual import ColorVisuals

from real2sim.atomic import write_bytes
from real2sim.errors import InputError


def mesh_to_ply_bytes(mesh: trimesh.Trimesh) -> bytes:
    v = np.ascontiguousarray(mesh.vertices, dtype="<f8")
    f = np.ascontiguousarray(mesh.faces, dtype="<i4")
    colors = None
    if isinstance(mesh.visual, ColorVisuals) and mesh.visual.kind == "vertex":
        colors = np.ascontiguousarray(mesh.visual.vertex_colors, dtype=np.uint8)
        if colors.shape != (len(v), 4):
            colors = None
    header = ["ply", "format binary_little_endian 1.0", f"element vertex {len(v)}"]
    header += ["property double x", "property double y", "property double z"]
    if colors is not None:
        header += [f"property uchar {c}" for c in ("red", "green", "blue", "alpha")]
    header += [f"element face {len(f)}", "property list uchar int vertex_indices", "end_header"]
    head = ("\n".join(header) + "\n").encode("ascii")
    if colors is not None:
        vdt = np.dtype([("p", "<f8", 3), ("c", "u1", 4)])
        vrec = np.empty(len(v), dtype=vdt)
        vrec["p"], vrec["c"] = v, colors
    else:
        vrec = v
    fdt = np.dtype([("n", "u1"), ("i", "<i4", 3)])
    frec = np.empty(len(f), dtype=fdt)
    frec["n"], frec["i"] = 3, f
    return head + vrec.tobytes() + frec.tobytes()


def save_mesh(path: str | Path, mesh: trimesh.Trimesh) -> None:
    write_bytes(path, mesh_to_ply_bytes(mesh))


def load_mesh(path: str | Path) -> trimesh.Trimesh:
    """Load a triangle mesh without merging or reordering anything (so a saved mesh loads back identical)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "mesh file not found")
    try:
        mesh = trimesh.load(path, process=False, force="mesh")
    except Exception as exc:  # trimesh raises many types for malformed files
        raise InputError(path, f"cannot read mesh ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise InputError(path, "file holds no triangles")
    mesh.vertices = np.asarray(mesh.vertices, dtype=np.float64)
    return mesh
