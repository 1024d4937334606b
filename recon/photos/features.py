"""COLMAP feature extraction and matching into a database (pycolmap), the database renumbered by image name, and
what it says about each image afterwards (keypoints, verified pairs)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from real2sim.recon.photos.config import SfmCfg

_PAIR_BASE = 2147483647


def _device(name: str):
    import pycolmap

    if name == "auto":
        return pycolmap.Device.cuda if pycolmap.has_cuda else pycolmap.Device.cpu
    return pycolmap.Device.cuda if name == "cuda" else pycolmap.Device.cpu


def camera_key(path: Path) -> tuple:
    """What tells one physical camera setting from another: the stored pixel size (EXIF orientation is not applied,
    as in COLMAP) and the EXIF make, model and focal lengths when the file has them."""
    from PIL import Image

    with Image.open(path) as im:
        exif = im.getexif()
        sub = exif.get_ifd(0x8769)
        return (im.size, str(exif.get(0x010F, "")).strip(), str(exif.get(0x0110, "")).strip(),
                float(sub.get(0x920A, 0) or 0), float(sub.get(0xA405, 0) or 0))  # fmt: skip


def camera_groups(image_dir: Path, names: list[str], shared: bool | None) -> list[list[str]]:
    """Images that share one camera: all (``shared``), each its own (``shared`` False), or by default one camera
    per size and EXIF camera setting (portrait and landscape shots of one phone are two groups)."""
    if shared is not None:
        return [list(names)] if shared else [[n] for n in names]
    groups: dict[tuple, list[str]] = {}
    for n in names:
        groups.setdefault(camera_key(image_dir / n), []).append(n)
    return list(groups.values())


def extract_features(image_dir: Path, names: list[str], db: Path, cfg: SfmCfg, first_octave: int) -> None:
    import pycolmap

    reader = pycolmap.ImageReaderOptions()
    reader.camera_model = cfg.camera_model
    if cfg.intrinsics is not None:
        reader.camera_params = ",".join(repr(float(x)) for x in cfg.intrinsics)
    ext = pycolmap.FeatureExtractionOptions()
    ext.num_threads = cfg.num_threads
    ext.max_image_size = cfg.max_image_size
    ext.sift.max_num_features = cfg.max_features
    ext.sift.first_octave = first_octave
    # One extraction per camera group: COLMAP's SINGLE mode gives the group one camera (EXIF focal as its prior).
    for group in camera_groups(image_dir, names, cfg.shared_intrinsics):
        pycolmap.extract_features(
            db,
            image_dir,
            image_names=group,
            camera_mode=pycolmap.CameraMode.SINGLE,
            reader_options=reader,
            extraction_options=ext,
            device=_device(cfg.device),
        )


def _median_keypoints(db: Path) -> float:
    con = sqlite3.connect(str(db))
    try:
        rows = [r for (r,) in con.execute("SELECT rows FROM keypoints")]
    finally:
        con.close()
    return float(np.median(rows)) if rows else 0.0


_CAMERA = 0  # COLMAP's sensor type id of a camera in the database


def _renumber_by_name(db: Path) -> None:
    """Renumber images, frames, cameras and rigs in the order of the image names.

    Multi-threaded feature extraction writes images in the order their extraction finishes, so the ids (and with
    them the matching pairs' ids and the mappers' iteration order) change from run to run; with ids that follow
    the sorted names the rest of the pipeline sees the same database every time (same input, same bytes)."""
    con = sqlite3.connect(str(db))
    try:
        images = sorted(con.execute("SELECT image_id, name, camera_id FROM images"), key=lambda r: r[1])
        img = {old: k + 1 for k, (old, _, _) in enumerate(images)}
        cam: dict[int, int] = {}
        for _, _, c in images:
            cam.setdefault(c, len(cam) + 1)
        for (c,) in con.execute("SELECT camera_id FROM cameras ORDER BY camera_id"):
            cam.setdefault(c, len(cam) + 1)
        data = list(con.execute("SELECT frame_id, data_id, sensor_id, sensor_type FROM frame_data"))
        first: dict[int, int] = {}
        for f, d, _, t in data:
            if t == _CAMERA and d in img:
                first[f] = min(first.get(f, 1 << 40), img[d])
        frames = list(con.execute("SELECT frame_id, rig_id FROM frames"))
        frame = {
            f: k + 1
            for k, (f, _) in enumerate(sorted(frames, key=lambda r: (first.get(r[0], 1 << 40), r[0])))
        }
        rigs = list(con.execute("SELECT rig_id, ref_sensor_id, ref_sensor_type FROM rigs"))
        rig = {r: k + 1 for k, (r, s, t) in enumerate(sorted(rigs, key=lambda r: (cam.get(r[1], 1 << 40)
                                                                                  if r[2] == _CAMERA else 1 << 40, r[0])))}  # fmt: skip

        def c_(sid: int, t: int) -> int:
            return cam.get(sid, sid) if t == _CAMERA else sid

        tables = {
            "images": ("SELECT image_id, name, camera_id FROM images", lambda r: (img[r[0]], r[1], cam[r[2]])),
            "cameras": ("SELECT * FROM cameras", lambda r: (cam[r[0]], *r[1:])),
            "keypoints": ("SELECT * FROM keypoints", lambda r: (img.get(r[0], r[0]), *r[1:])),
            "descriptors": ("SELECT * FROM descriptors", lambda r: (img.get(r[0], r[0]), *r[1:])),
            "frames": ("SELECT frame_id, rig_id FROM frames", lambda r: (frame[r[0]], rig.get(r[1], r[1]))),
            "frame_data": ("SELECT frame_id, data_id, sensor_id, sensor_type FROM frame_data",
                           lambda r: (frame.get(r[0], r[0]), img.get(r[1], r[1]) if r[3] == _CAMERA else r[1],
                                      c_(r[2], r[3]), r[3])),
            "rigs": ("SELECT rig_id, ref_sensor_id, ref_sensor_type FROM rigs",
                     lambda r: (rig[r[0]], c_(r[1], r[2]), r[2])),
            "rig_sensors": ("SELECT * FROM rig_sensors", lambda r: (rig.get(r[0], r[0]), c_(r[1], r[2]), *r[2:])),
            "pose_priors": ("SELECT * FROM pose_priors",
                            lambda r: (r[0], img.get(r[1], r[1]) if r[3] == _CAMERA else r[1], c_(r[2], r[3]), *r[3:])),
        }  # fmt: skip
        rows = {t: sorted(f(r) for r in con.execute(q)) for t, (q, f) in tables.items()}
        with con:
            for t, rs in rows.items():
                con.execute(f"DELETE FROM {t}")
                if rs:
                    con.executemany(f"INSERT INTO {t} VALUES ({','.join('?' * len(rs[0]))})", rs)
    finally:
        con.close()


def extract_and_match(image_dir: Path, names: list[str], db: Path, cfg: SfmCfg, timings: dict) -> str:
    import pycolmap

    t = time.perf_counter()
    octave = 0 if cfg.first_octave is None else cfg.first_octave
    extract_features(image_dir, names, db, cfg, octave)
    if cfg.first_octave is None and _median_keypoints(db) < cfg.min_features:
        db.unlink()
        extract_features(image_dir, names, db, cfg, -1)
    _renumber_by_name(db)
    timings["features"] = time.perf_counter() - t
    t = time.perf_counter()
    match = pycolmap.FeatureMatchingOptions()
    match.num_threads = cfg.num_threads
    verify = pycolmap.TwoViewGeometryOptions()
    verify.ransac.random_seed = cfg.seed
    matching = cfg.matching
    if matching == "auto":
        matching = "exhaustive" if len(names) <= cfg.exhaustive_max else "sequential"
    if matching == "exhaustive":
        pycolmap.match_exhaustive(
            db, matching_options=match, verification_options=verify, device=_device(cfg.device)
        )
    else:
        pycolmap.match_sequential(
            db, matching_options=match, verification_options=verify, device=_device(cfg.device)
        )
    timings["matching"] = time.perf_counter() - t
    return matching


def db_stats(db: Path) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """Per image name: keypoint count, number of verified pairs, best pair inlier count."""
    con = sqlite3.connect(str(db))
    try:
        ids = dict(con.execute("SELECT image_id, name FROM images"))
        kp = {ids[i]: r for i, r in con.execute("SELECT image_id, rows FROM keypoints") if i in ids}
        pairs = {n: 0 for n in ids.values()}
        best = {n: 0 for n in ids.values()}
        for pair_id, rows in con.execute("SELECT pair_id, rows FROM two_view_geometries WHERE rows > 0"):
            i2 = pair_id % _PAIR_BASE
            i1 = (pair_id - i2) // _PAIR_BASE
            for i in (i1, i2):
                if i in ids:
                    pairs[ids[i]] += 1
                    best[ids[i]] = max(best[ids[i]], rows)
    finally:
        con.close()
    return kp, pairs, best
