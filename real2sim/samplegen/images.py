"""Photographs of the table rendered with MuJoCo offscreen, with an ArUco marker of known size printed on the table.

The table and objects carry procedural multi-scale noise textures (so SIFT finds thousands of features); the marker
(``cv2.aruco`` DICT_4X4_50, id 0) lies flat on the table on a white sheet. Cameras ring the table at varied heights
and distances, looking at points near its centre. Intrinsics are those of an ideal pinhole with square pixels and
the principal point at the image centre in OpenCV pixel coordinates (pixel centres at integers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import trimesh

from real2sim.samplegen.lidar import look_at

if TYPE_CHECKING:
    import mujoco


@dataclass(frozen=True)
class PhotoCfg:
    """Camera model and capture plan of the rendered photos."""

    n_images: int = 24
    """Number of photos (>= 20)."""
    width: int = 640
    """Image width [px]."""
    height: int = 480
    """Image height [px]."""
    fovy_deg: float = 50.0
    """Vertical field of view [deg]."""
    jpeg_quality: int = 93
    """JPEG quality (images are saved as JPEG to keep the session small)."""

    def validate(self) -> None:
        if self.n_images < 1 or self.width < 16 or self.height < 16:
            raise ValueError("photos: n_images >= 1 and an image of at least 16x16 px")
        if not 1 < self.fovy_deg < 170:
            raise ValueError("photos: fovy_deg must be in (1, 170)")
        if not 50 <= self.jpeg_quality <= 100:
            raise ValueError("photos: jpeg_quality must be in [50, 100]")

    @property
    def fy(self) -> float:
        return (self.height / 2) / np.tan(np.radians(self.fovy_deg) / 2)

    def intrinsics(self) -> dict[str, float]:
        f = float(self.fy)
        return {"fx": f, "fy": f, "cx": (self.width - 1) / 2, "cy": (self.height - 1) / 2}


@dataclass(frozen=True)
class Marker:
    """The printed ArUco marker: black square of side ``size`` centred on a white sheet of side ``sheet``."""

    size: float
    """Side of the black square [m] (what ``cv2.aruco`` pose estimation calls the marker length)."""
    world_from_marker: np.ndarray
    """4x4 pose: origin at the square's centre, x right and y up in the printed image, z out of the table."""
    dictionary: str = "DICT_4X4_50"
    marker_id: int = 0

    @property
    def sheet(self) -> float:
        """Side of the white sheet [m]: one marker cell of white margin on each side (4x4 bits + 2 border cells)."""
        return self.size * 8 / 6

    def corners_marker(self) -> np.ndarray:
        """(4, 3) corners in the marker frame in ``cv2.aruco``'s order: top-left, top-right, bottom-right,
        bottom-left of the printed image."""
        h = self.size / 2
        return np.array([[-h, h, 0.0], [h, h, 0.0], [h, -h, 0.0], [-h, -h, 0.0]])

    def corners_world(self) -> np.ndarray:
        c = self.corners_marker()
        return c @ self.world_from_marker[:3, :3].T + self.world_from_marker[:3, 3]


def noise_texture(
    rng: np.random.Generator,
    size: int,
    tint: tuple[float, float, float],
    min_cells: int = 8,
    max_cells: int = 256,
) -> np.ndarray:
    """An RGB uint8 texture of multi-scale value noise (cubic-upsampled random grids from ``min_cells`` to
    ``max_cells`` per side, equal weights), contrast-stretched into blotches and tinted; tiles seamlessly."""
    import cv2

    acc = np.zeros((size, size), np.float64)
    chroma = np.zeros((size, size, 3), np.float64)
    cells = min_cells
    while cells <= min(max_cells, size):
        grid = rng.uniform(-1, 1, size=(cells, cells, 4))
        # Wrap-pad so the cubic upsampling tiles without seams, then crop one period.
        pad = np.pad(grid, ((2, 2), (2, 2), (0, 0)), mode="wrap")
        scale = size // cells
        up = cv2.resize(pad, (pad.shape[1] * scale, pad.shape[0] * scale), interpolation=cv2.INTER_CUBIC)
        up = up[2 * scale : 2 * scale + size, 2 * scale : 2 * scale + size]
        acc += up[:, :, 0]
        if cells <= 4 * min_cells:
            chroma += up[:, :, 1:]
        cells *= 2
    lum = np.tanh(1.6 * acc / acc.std())  # blotchy, high-contrast luminance: many blob-like features
    col = np.asarray(tint)[None, None, :] * (0.62 + 0.38 * lum[:, :, None]) + 0.03 * chroma / chroma.std()
    return (np.clip(col, 0, 1) * 255).round().astype(np.uint8)


def marker_texture(marker: Marker, px_per_cell: int = 40) -> np.ndarray:
    """RGB uint8 image of the white sheet with the ArUco marker in its middle (row 0 = top of the print)."""
    import cv2

    d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, marker.dictionary))
    img = cv2.aruco.generateImageMarker(d, marker.marker_id, 6 * px_per_cell, borderBits=1)
    sheet = np.full((8 * px_per_cell, 8 * px_per_cell), 255, np.uint8)
    sheet[px_per_cell : 7 * px_per_cell, px_per_cell : 7 * px_per_cell] = img
    return np.repeat(sheet[:, :, None], 3, axis=2)


def triplanar_uv(mesh: trimesh.Trimesh, tile: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-face-corner texture coordinates: each face projected on the plane of its dominant normal axis, in units
    of ``tile`` [m]. Returns (texcoords (3F, 2), facetexcoord (F, 3))."""
    f = np.asarray(mesh.faces)
    n = np.abs(np.asarray(mesh.face_normals))
    axis = n.argmax(axis=1)
    keep = np.array([[1, 2], [0, 2], [0, 1]])[axis]  # the two coordinates orthogonal to the dominant axis
    corners = np.asarray(mesh.vertices)[f]  # (F, 3, 3)
    uv = np.take_along_axis(corners, keep[:, None, :].repeat(3, axis=1), axis=2) / tile
    return uv.reshape(-1, 2), np.arange(3 * len(f)).reshape(-1, 3)


def camera_poses(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """``n`` world_from_cam poses (OpenCV convention) ringing the table at varied heights and distances."""
    poses = []
    az0 = rng.uniform(0, 2 * np.pi)
    for k in range(n):
        az = az0 + 2 * np.pi * k / n + rng.uniform(-0.08, 0.08)
        dist = rng.uniform(0.42, 0.70)
        h = rng.uniform(0.28, 0.65)
        eye = np.array([dist * np.cos(az), dist * np.sin(az), h])
        target = np.array([rng.uniform(-0.08, 0.08), rng.uniform(-0.08, 0.08), rng.uniform(0.0, 0.04)])
        poses.append(look_at(eye, target))
    return poses


def _add_textured_mesh(
    spec,
    name: str,
    mesh: trimesh.Trimesh,
    tex: np.ndarray,
    tile: float,  # noqa: ANN001
    pose: np.ndarray,
    rgba=(1, 1, 1, 1),
) -> None:  # noqa: ANN001
    import mujoco

    t = spec.add_texture(
        name=f"{name}_tex",
        type=mujoco.mjtTexture.mjTEXTURE_2D,
        width=tex.shape[1],
        height=tex.shape[0],
        nchannel=3,
    )
    t.data = np.ascontiguousarray(tex).tobytes()
    mat = spec.add_material(name=f"{name}_mat", rgba=list(rgba), specular=0.15, shininess=0.3)
    mat.textures[int(mujoco.mjtTextureRole.mjTEXROLE_RGB)] = f"{name}_tex"
    uv, fuv = triplanar_uv(mesh, tile)
    m = spec.add_mesh(name=f"{name}_mesh")
    m.uservert = np.asarray(mesh.vertices, dtype=np.float64).ravel().tolist()
    m.userface = np.asarray(mesh.faces, dtype=np.int64).ravel().tolist()
    m.usertexcoord = uv.ravel().tolist()
    m.userfacetexcoord = fuv.ravel().tolist()
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(pose[:3, :3]).ravel())
    spec.worldbody.add_geom(
        name=name,
        type=mujoco.mjtGeom.mjGEOM_MESH,
        meshname=f"{name}_mesh",
        material=f"{name}_mat",
        pos=pose[:3, 3].tolist(),
        quat=q.tolist(),
        contype=0,
        conaffinity=0,
    )


def build_model(
    rng: np.random.Generator,
    table: trimesh.Trimesh,
    objects: list[tuple[str, trimesh.Trimesh, np.ndarray, tuple[float, float, float]]],
    marker: Marker,
    cams_world_from_cam: list[np.ndarray],
    cfg: PhotoCfg,
) -> mujoco.MjModel:
    """A MuJoCo model of the textured table, objects (name, mesh in object frame, world_from_object, rgb), the
    marker sheet and one camera per photo."""
    import mujoco

    spec = mujoco.MjSpec()
    spec.visual.global_.offwidth = cfg.width
    spec.visual.global_.offheight = cfg.height
    spec.visual.quality.shadowsize = 2048
    spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
    spec.visual.headlight.diffuse = [0.35, 0.35, 0.35]
    spec.visual.headlight.specular = [0.05, 0.05, 0.05]
    spec.worldbody.add_light(
        pos=[0.3, -0.2, 1.6],
        dir=[-0.15, 0.1, -1.0],
        diffuse=[0.6, 0.6, 0.6],
        specular=[0.1, 0.1, 0.1],
        castshadow=True,
    )
    # One texture period spans the whole table top: a texture that repeats on the table gives SfM identical
    # patches in different places, and views from opposite sides then "match" (wrong poses, collapsed scale).
    table_tile = 1.05 * float(max(table.extents[:2]))
    _add_textured_mesh(
        spec, "table", table, noise_texture(rng, 1024, (0.62, 0.50, 0.38)), table_tile, np.eye(4)
    )
    for name, mesh, pose, rgb in objects:
        _add_textured_mesh(spec, name, mesh, noise_texture(rng, 512, rgb), 0.12, pose)
    # The printed sheet: a 0.2 mm thin box mesh whose top face carries the marker image, marker frame at its top.
    s = marker.sheet / 2
    sheet = trimesh.creation.box(extents=(2 * s, 2 * s, 0.0002))
    sheet.apply_translation([0, 0, -0.0001])
    tex = marker_texture(marker)
    t = spec.add_texture(
        name="marker_tex",
        type=mujoco.mjtTexture.mjTEXTURE_2D,
        width=tex.shape[1],
        height=tex.shape[0],
        nchannel=3,
    )
    t.data = tex.tobytes()
    mat = spec.add_material(name="marker_mat", specular=0.05)
    mat.textures[int(mujoco.mjtTextureRole.mjTEXROLE_RGB)] = "marker_tex"
    v = np.asarray(sheet.vertices)
    # (u, v) = (x, y) mapped from [-s, s] to [0, 1]; which image row is v = 0 is fixed by a test (marker decodes
    # as id 0 only if not mirrored, and its corners must project where the ground truth says).
    uv = np.stack([(v[:, 0] + s) / (2 * s), 1 - (v[:, 1] + s) / (2 * s)], axis=1)
    m = spec.add_mesh(name="marker_mesh")
    m.uservert = v.ravel().tolist()
    m.userface = np.asarray(sheet.faces).ravel().tolist()
    m.usertexcoord = uv.ravel().tolist()
    m.userfacetexcoord = np.asarray(sheet.faces).ravel().tolist()
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(marker.world_from_marker[:3, :3]).ravel())
    spec.worldbody.add_geom(
        name="marker",
        type=mujoco.mjtGeom.mjGEOM_MESH,
        meshname="marker_mesh",
        material="marker_mat",
        pos=marker.world_from_marker[:3, 3].tolist(),
        quat=q.tolist(),
        contype=0,
        conaffinity=0,
    )
    flip = np.diag(
        [1.0, -1.0, -1.0]
    )  # OpenCV camera axes -> MuJoCo camera axes (x right, y up, looks along -z)
    for k, T in enumerate(cams_world_from_cam):
        qc = np.zeros(4)
        mujoco.mju_mat2Quat(qc, np.ascontiguousarray(T[:3, :3] @ flip).ravel())
        spec.worldbody.add_camera(
            name=f"cam{k:03d}", pos=T[:3, 3].tolist(), quat=qc.tolist(), fovy=cfg.fovy_deg
        )
    return spec.compile()


def render_photos(model: mujoco.MjModel, cfg: PhotoCfg) -> list[np.ndarray]:
    """Render every camera of ``model``; RGB uint8 (H, W, 3), row 0 at the top."""
    import mujoco

    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    out = []
    with mujoco.Renderer(model, cfg.height, cfg.width) as r:
        for k in range(model.ncam):
            r.update_scene(data, camera=k)
            out.append(r.render().copy())
    return out


def encode_jpeg(img_rgb: np.ndarray, quality: int) -> bytes:
    import cv2

    ok, buf = cv2.imencode(".jpg", img_rgb[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return buf.tobytes()
