"""Visual mesh: the repaired surface decimated to a face budget, vertex colours carried over."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh
from trimesh.visual import ColorVisuals

from real2sim.atomic import write_bytes, write_text
from real2sim.export.objects.repair import transfer_colors
from real2sim.export.writers.objio import obj_text

FLAT_TOLERANCE = 1e-6
"""Before decimating, edges whose collapse moves the surface by less than this x the diagonal are collapsed
(manifold3d ``simplify``: the result stays a closed manifold on a subset of the vertices)."""


def collapse_flat(mesh: trimesh.Trimesh) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and faces of a watertight ``mesh`` with its flat and sliver triangles merged (``FLAT_TOLERANCE``);
    the mesh as it is if manifold3d does not take it."""
    import manifold3d

    v, f = np.array(mesh.vertices, dtype=np.float64), np.array(mesh.faces, dtype=np.int64)
    if not mesh.is_watertight:
        return v, f
    solid = manifold3d.Manifold(manifold3d.Mesh64(vert_properties=v, tri_verts=f.astype(np.uint32)))
    if solid.status() != manifold3d.Error.NoError or solid.is_empty():
        return v, f
    out = solid.simplify(FLAT_TOLERANCE * float(np.linalg.norm(mesh.extents))).to_mesh64()
    return np.array(out.vert_properties[:, :3], dtype=np.float64), np.array(out.tri_verts, dtype=np.int64)


def decimate(mesh: trimesh.Trimesh, faces: int) -> trimesh.Trimesh:
    """Quadric-error decimation (Open3D) to at most ``faces`` triangles, flat triangles merged first
    (``FLAT_TOLERANCE``); colours follow the nearest vertex."""
    if len(mesh.faces) <= faces:
        return mesh.copy()
    import open3d as o3d  # import before coacd in any process (their C++ runtimes clash the other way round)

    v, f = collapse_flat(mesh)
    om = o3d.geometry.TriangleMesh(
        o3d.utility.Vector3dVector(v), o3d.utility.Vector3iVector(f.astype(np.int32))
    )
    d = om.simplify_quadric_decimation(int(faces))
    out = trimesh.Trimesh(np.asarray(d.vertices, dtype=np.float64), np.asarray(d.triangles, dtype=np.int64))
    out.update_faces(out.nondegenerate_faces())
    out.remove_unreferenced_vertices()
    colors = None
    if isinstance(mesh.visual, ColorVisuals) and mesh.visual.kind == "vertex":
        colors = np.asarray(mesh.visual.vertex_colors, dtype=np.uint8)
    transfer_colors(out, np.asarray(mesh.vertices), colors)
    return out


def visual_mesh(mesh: trimesh.Trimesh, faces: int) -> trimesh.Trimesh:
    """The visual mesh within the ``faces`` budget (the watertight mesh itself when it is small enough)."""
    return decimate(mesh, faces)


def mean_rgba(mesh: trimesh.Trimesh, rgba: tuple[float, ...] | None) -> tuple[float, float, float, float]:
    """One colour for engines without vertex colours: the object's ``rgba`` or the mean vertex colour."""
    if rgba is not None:
        return tuple(float(x) for x in rgba)  # type: ignore[return-value]
    if isinstance(mesh.visual, ColorVisuals) and mesh.visual.kind == "vertex":
        c = np.asarray(mesh.visual.vertex_colors, dtype=np.float64).mean(axis=0) / 255.0
        return (round(c[0], 4), round(c[1], 4), round(c[2], 4), 1.0)
    return (0.7, 0.7, 0.7, 1.0)


ATLAS_CELL = 2
"""Texture-atlas pixels per face side: each face owns an ``ATLAS_CELL``² cell whose texel centres hold the linear
(barycentric) colour field of its three vertex colours, extended past the triangle: its corners sit on texel
centres, so bilinear sampling inside it gives exactly that field, with no bleeding between faces."""


@dataclass(frozen=True)
class ColourAtlas:
    """Per-vertex colours baked into a texture: ``uv`` (3F, 2) one coordinate per face corner (face ``i``'s
    corners are rows ``3i..3i+2``), ``image`` (H, W, 3) uint8 RGB."""

    uv: np.ndarray
    image: np.ndarray

    def png(self) -> bytes:
        import io

        from PIL import Image

        buf = io.BytesIO()
        Image.fromarray(self.image).save(buf, format="PNG", optimize=False)
        return buf.getvalue()


def has_colours(mesh: trimesh.Trimesh) -> bool:
    """Whether ``mesh`` carries per-vertex colours (then its package visual mesh is textured)."""
    return isinstance(mesh.visual, ColorVisuals) and mesh.visual.kind == "vertex" and len(mesh.faces) > 0


def texture_file(visual_file: str) -> str:
    """The colour texture's file name beside ``visual_file`` (``x_visual.obj`` -> ``x_visual.png``)."""
    return visual_file.removesuffix(".obj") + ".png"


def colour_atlas(mesh: trimesh.Trimesh) -> ColourAtlas | None:
    """The mesh's vertex colours as a texture atlas with per-face UVs (``None`` when it has no vertex colours)."""
    if not (has_colours(mesh) and isinstance(mesh.visual, ColorVisuals)):
        return None
    colors = np.asarray(mesh.visual.vertex_colors, dtype=np.float64)[:, :3]
    faces = np.asarray(mesh.faces, dtype=np.int64)
    s, nf = ATLAS_CELL, len(faces)
    n = int(np.ceil(np.sqrt(nf)))
    size = n * s
    corners = np.array([[0.5, 0.5], [s - 0.5, 0.5], [0.5, s - 0.5]])
    y, x = np.mgrid[0:s, 0:s] + 0.5
    b1 = ((x - 0.5) / (s - 1)).ravel()
    b2 = ((y - 0.5) / (s - 1)).ravel()
    w = np.stack([1 - b1 - b2, b1, b2], axis=1)
    cells = np.zeros((n * n, s * s, 3))
    cells[:nf] = np.einsum("pk,fkc->fpc", w, colors[faces])
    img = cells.reshape(n, n, s, s, 3).transpose(0, 2, 1, 3, 4).reshape(size, size, 3)
    idx = np.arange(nf)
    origin = np.stack([idx % n, idx // n], axis=1).astype(np.float64) * s
    px = (origin[:, None, :] + corners[None]).reshape(-1, 2)
    uv = np.stack([px[:, 0] / size, 1.0 - px[:, 1] / size], axis=1)
    return ColourAtlas(uv, np.clip(np.round(img), 0, 255).astype(np.uint8))


def textured_obj_text(mesh: trimesh.Trimesh, atlas: ColourAtlas, header: str, mtl: str) -> str:
    """OBJ text with the atlas UVs (``vt``, one per face corner) and ``f v/vt`` faces using material ``mtl``."""
    v = np.asarray(mesh.vertices, dtype=np.float64) + 0.0
    f = np.asarray(mesh.faces, dtype=np.int64) + 1
    t = np.arange(1, 3 * len(f) + 1).reshape(-1, 3)
    head = f"# {header}\nmtllib {mtl}.mtl\nusemtl {mtl}\n"
    vtext = ("v %.9g %.9g %.9g\n" * len(v)) % tuple(v.ravel().tolist())
    ttext = ("vt %.6f %.6f\n" * len(atlas.uv)) % tuple((atlas.uv + 0.0).ravel().tolist())
    ft = np.stack([f, t], axis=2).reshape(len(f), 6)
    ftext = ("f %d/%d %d/%d %d/%d\n" * len(f)) % tuple(ft.ravel().tolist())
    return head + vtext + ttext + ftext


def mtl_text(name: str, texture: str) -> str:
    """A Wavefront material that maps ``texture`` (for OBJ viewers; MuJoCo reads the MJCF material)."""
    return f"newmtl {name}\nKa 1 1 1\nKd 1 1 1\nKs 0 0 0\nmap_Kd {texture}\n"


def write_visual(assets: Path, file: str, mesh: trimesh.Trimesh, header: str) -> None:
    """The visual OBJ in ``assets``; with vertex colours, also its colour texture (PNG atlas) and OBJ material."""
    atlas = colour_atlas(mesh)
    if atlas is None:
        write_text(assets / file, obj_text(mesh.vertices, mesh.faces, None, header))
        return
    stem = file.removesuffix(".obj")
    write_bytes(assets / texture_file(file), atlas.png())
    write_text(assets / f"{stem}.mtl", mtl_text(stem, texture_file(file)))
    write_text(assets / file, textured_obj_text(mesh, atlas, header, stem))
