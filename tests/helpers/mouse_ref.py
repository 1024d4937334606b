"""The author's COLMAP model of ``photos/mouse_table`` as a reference: its cameras, and the extents of its sparse
points on the mouse, picked without our segmentation (points above the author's table plane, near the point the
cameras look at)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.recon.photos.align import Similarity, camera_centre, pose_errors


def reference_model(data: Path) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``cam_from_world`` per registered image and the sparse points of the author's model."""
    import pycolmap

    rec = pycolmap.Reconstruction(str(data / "reference" / "sparse" / "0"))
    cams = {}
    for img in rec.images.values():
        if img.has_pose:
            m = np.eye(4)
            m[:3, :] = img.cam_from_world().matrix()
            cams[img.name] = m
    return cams, np.array([p.xyz for p in rec.points3D.values()], dtype=float)


def _look_at(cams: dict[str, np.ndarray]) -> np.ndarray:
    """The point closest (least squares) to every camera's optical axis."""
    a, b = np.zeros((3, 3)), np.zeros(3)
    for m in cams.values():
        p = np.eye(3) - np.outer(m[2, :3], m[2, :3])
        a += p
        b += p @ camera_centre(m)
    return np.linalg.solve(a, b)


def mouse_frame(cams: dict[str, np.ndarray], points: np.ndarray) -> dict:
    """The author's table plane (normal ``up``, height ``table``), the mouse's points on it (inside a box around the
    point the cameras look at, above the table) and their in-plane axes; lengths in the author's units."""
    centres = np.array([camera_centre(m) for m in cams.values()])
    up = np.linalg.svd(centres - centres.mean(0))[2][2]  # normal of the camera ring(s)
    if np.median([-m[1, :3] @ up for m in cams.values()]) < 0:
        up = -up
    look = _look_at(cams)
    dist = float(np.median(np.linalg.norm(centres - look, axis=1)))
    flat = points - np.outer((points - look) @ up, up)
    box = np.linalg.norm(flat - look, axis=1) < 0.5 * dist
    h = points @ up
    low = box & (h < np.percentile(h[box], 1) + 0.01 * dist)  # the table around and under the mouse's rim
    c = points[low].mean(0)
    up = np.linalg.svd(points[low] - c)[2][2]  # the table plane through those points
    up = up if up @ (centres.mean(0) - c) > 0 else -up
    table = float(c @ up)
    h = points @ up - table
    on = np.flatnonzero(box & (h > 0.01 * dist) & (h < 0.5 * dist))
    on = on[_dense(points[on], 0.05 * dist, 10)]  # strays off the surface
    e1 = np.cross(up, [1.0, 0, 0] if abs(up[0]) < 0.9 else [0, 1.0, 0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(up, e1)
    axes = _rect_axes(np.stack([points[on] @ e1, points[on] @ e2], 1), e1, e2)
    return {"up": up, "table": table, "axes": axes, "points": points[on], "dist": dist}


def _dense(pts: np.ndarray, radius: float, k: int) -> np.ndarray:
    from scipy.spatial import cKDTree

    return np.array([len(n) > k for n in cKDTree(pts).query_ball_point(pts, radius)], dtype=bool)


def _rect_axes(xy: np.ndarray, e1: np.ndarray, e2: np.ndarray) -> np.ndarray:
    """The in-plane axes of the smallest rectangle around the points (top view)."""
    import cv2

    (_, _, angle) = cv2.minAreaRect(xy.astype(np.float32))
    a = np.radians(angle)
    return np.array([np.cos(a) * e1 + np.sin(a) * e2, -np.sin(a) * e1 + np.cos(a) * e2])


def extents_in(frame: dict, pts: np.ndarray, robust: bool) -> np.ndarray:
    """Sorted extents of ``pts`` along the frame's in-plane axes and above its table (``robust``: 0.5-99.5 %
    percentiles, for sparse points with strays)."""
    lo, hi = (0.5, 99.5) if robust else (0, 100)
    out = [np.diff(np.percentile(pts @ a, [lo, hi]))[0] for a in frame["axes"]]
    out.append(np.percentile(pts @ frame["up"], hi) - frame["table"])
    return np.sort(out)


def align_to_reference(est: dict[str, np.ndarray], ref: dict[str, np.ndarray]) -> tuple[Similarity, dict]:
    """Similarity from our frame to the author's (camera centres) and the pose errors after it."""
    e = pose_errors(est, ref)
    return e.alignment, e.summary()


def reference_views(data: Path, factor: float = 2 / 3) -> tuple[dict, np.ndarray, dict[str, set[int]]]:
    """The author's cameras as dense-stereo views of the stored (downscaled by ``factor``) images, the sparse points
    and the point indices each image sees."""
    import pycolmap

    from real2sim.recon.photos.stereo import View

    rec = pycolmap.Reconstruction(str(data / "reference" / "sparse" / "0"))
    ids = sorted(rec.points3D)
    index = {p: i for i, p in enumerate(ids)}
    views, seen = {}, {}
    for img in rec.images.values():
        if not img.has_pose:
            continue
        cam = rec.cameras[img.camera_id]
        k = np.asarray(cam.calibration_matrix(), dtype=float)
        k[:2] *= factor
        k[0, 2] -= 0.5
        k[1, 2] -= 0.5
        m = img.cam_from_world().matrix()
        size = (round(cam.width * factor), round(cam.height * factor))
        views[img.name] = View(img.name, k, np.zeros(5), m[:, :3], m[:, 3], size)
        seen[img.name] = {index[p.point3D_id] for p in img.points2D if p.has_point3D()}
    return views, np.array([rec.points3D[p].xyz for p in ids], dtype=float), seen


def evaluate_mouse_scene(scene_dir: Path, data: Path) -> dict:
    """A ``recon photos`` output of mouse_table against the author's model: pose errors after a similarity
    alignment of the camera centres, object count, watertightness, and each object's sorted extents (in the
    author's table frame, after the same alignment) over those of the author's sparse points on the mouse."""
    import json

    from real2sim.scene import load_scene

    ref, pts = reference_model(data)
    cams = {c["file"]: np.asarray(c["cam_from_world"]) for c in json.loads((scene_dir / "cameras.json").read_text())["cameras"]}  # fmt: skip
    sim, poses = align_to_reference(cams, ref)
    frame = mouse_frame(ref, pts)
    ref_ext = extents_in(frame, frame["points"], robust=True)
    objects = []
    for ob in load_scene(scene_dir).objects:
        ext = extents_in(frame, sim.apply(ob.mesh_in_world().vertices), robust=False)
        objects.append({"name": ob.name, "watertight": bool(ob.mesh.is_watertight),
                        "extents_over_ref": [round(float(x), 3) for x in ext / ref_ext]})  # fmt: skip
    return {"registered": len(cams), "poses": poses, "objects": objects, "ref_extents": ref_ext.tolist()}


def silhouette_check(scene_dir: Path, data: Path, step: int = 1, overlays: Path | None = None) -> dict:
    """Every ``step``-th of the author's views: the mouse's mask in the photo (``silhouette.object_mask``, found
    without our reconstruction) against our object mesh (after the camera alignment) and the author's sparse points
    on the mouse, all projected with the author's camera. Medians over the views of the mesh's IoU with the mask
    and, along the mask's long and short axes, the mesh's and the author's points' extents over the mask's. With
    ``overlays``, a PNG per view there: the mask's outline green, the mesh's red, the author's points blue."""
    import json

    import cv2

    from real2sim.recon.photos.sfm import read_image
    from real2sim.scene import load_scene
    from tests.helpers.silhouette import axis_extents, iou, mesh_silhouette, object_mask, project

    ref, pts = reference_model(data)
    views, _, _ = reference_views(data)
    cams = {c["file"]: np.asarray(c["cam_from_world"]) for c in json.loads((scene_dir / "cameras.json").read_text())["cameras"]}  # fmt: skip
    sim, _ = align_to_reference(cams, ref)
    on_mouse = mouse_frame(ref, pts)["points"]
    meshes = [ob.mesh_in_world() for ob in load_scene(scene_dir).objects]
    rows = []
    for name in sorted(views)[::step]:
        v = views[name]
        img = read_image(data / "images" / name)
        if img is None or img.shape[1::-1] != v.size:
            img = cv2.resize(img, v.size, interpolation=cv2.INTER_AREA)
        mask = object_mask(img)
        sil = np.zeros_like(mask)
        for m in meshes:
            sil |= mesh_silhouette(sim.apply(np.asarray(m.vertices)), np.asarray(m.faces), v)
        e_mask, e_mesh, e_ref = axis_extents(mask, sil, project(on_mouse, v))
        rows.append([iou(mask, sil), *(e_mesh / e_mask), *(e_ref / e_mask)])
        if overlays is not None:
            _overlay(img, mask, sil, project(on_mouse, v), overlays / f"{Path(name).stem}.png", rows[-1])
    med = np.median(np.array(rows), 0)
    return {"views": len(rows), "iou": float(med[0]), "mesh_over_mask": med[1:3].round(3).tolist(),
            "ref_over_mask": med[3:5].round(3).tolist()}  # fmt: skip


def _overlay(
    img: np.ndarray, mask: np.ndarray, sil: np.ndarray, pts: np.ndarray, path: Path, row: list
) -> None:
    import cv2

    out = img.copy()
    for p in np.round(pts).astype(int):
        cv2.circle(out, (int(p[0]), int(p[1])), 2, (255, 0, 0), -1)
    for m, colour in ((mask, (0, 255, 0)), (sil, (0, 0, 255))):
        cnts, _ = cv2.findContours(m.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        cv2.drawContours(out, cnts, -1, colour, 2)
    text = f"IoU {row[0]:.2f}  long: mesh {row[1]:.2f} points {row[3]:.2f}"
    cv2.putText(out, text, (15, 40), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 0), 3)
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), out)
