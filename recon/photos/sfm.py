"""Structure from motion with pycolmap: SIFT (CPU or CUDA), matching suited to the set, global mapping with
incremental mapping as fallback, shared intrinsics for one camera, unregistered images listed with the reason.
Known intrinsics (``SfmCfg.intrinsics``) are needed for accurate orientations on an orbit / turntable path
(``SfmResult.warnings`` says so; why: docs/DECISIONS.md, Recon).
"""

from __future__ import annotations

import logging
import math
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from real2sim.errors import ConfigError, InputError, StageError
from real2sim.recon.photos.align import orbit_warning
from real2sim.recon.photos.config import SfmCfg
from real2sim.recon.photos.features import db_stats, extract_and_match

if TYPE_CHECKING:
    import pycolmap

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".tif", ".tiff", ".bmp", ".webp")


@dataclass(frozen=True)
class Intrinsics:
    """One camera's calibration: COLMAP model and parameters; ``K`` and OpenCV distortion derived from them."""

    model: str
    width: int
    height: int
    params: tuple[float, ...]

    def _cam(self):
        import pycolmap

        return pycolmap.Camera(
            model=self.model, width=self.width, height=self.height, params=list(self.params)
        )

    @property
    def K(self) -> np.ndarray:  # noqa: N802 - the usual name
        return np.asarray(self._cam().calibration_matrix(), dtype=float)

    @property
    def dist_coeffs(self) -> np.ndarray:
        """OpenCV distortion ``(k1, k2, p1, p2, k3)`` equivalent to the COLMAP model (perspective models only)."""
        p = self.params
        d = np.zeros(5)
        if self.model in ("SIMPLE_RADIAL",):
            d[0] = p[3]
        elif self.model == "RADIAL":
            d[0], d[1] = p[3], p[4]
        elif self.model == "OPENCV":
            d[:4] = p[4:8]
        elif self.model == "FULL_OPENCV":
            d[:4] = p[4:8]
            d[4] = p[8]
        elif self.model not in ("SIMPLE_PINHOLE", "PINHOLE"):
            raise StageError(f"camera model {self.model} has no OpenCV equivalent here; use PINHOLE..OPENCV")
        return d

    def to_json(self) -> dict:
        k = self.K
        return {
            "model": self.model,
            "width": self.width,
            "height": self.height,
            "params": [float(x) for x in self.params],
            "fx": float(k[0, 0]),
            "fy": float(k[1, 1]),
            "cx": float(k[0, 2]),
            "cy": float(k[1, 2]),
            "dist_coeffs_opencv": [float(x) for x in self.dist_coeffs],
        }


@dataclass(frozen=True)
class SfmResult:
    """Registered cameras (``cam_from_world``, SfM frame, arbitrary scale) and the sparse points."""

    image_dir: Path
    images: tuple[str, ...]
    cam_from_world: dict[str, np.ndarray]
    intrinsics: dict[str, Intrinsics]
    points: np.ndarray
    colors: np.ndarray
    unregistered: dict[str, str]
    mapper: Literal["global", "incremental"]
    timings: dict[str, float]
    warnings: tuple[str, ...] = ()
    mean_reprojection_error: float = float("nan")
    observations: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    """Per image: (M, 3) rows ``u, v, point_index`` of the triangulated keypoints."""
    reconstruction: pycolmap.Reconstruction | None = field(default=None, repr=False, compare=False)
    """The pycolmap ``Reconstruction`` (for COLMAP's dense stereo)."""

    @property
    def registered(self) -> tuple[str, ...]:
        return tuple(n for n in self.images if n in self.cam_from_world)


def read_image(path: Path, grey: bool = False) -> np.ndarray | None:
    """The stored pixels (BGR or grey) as COLMAP reads them: an EXIF orientation tag is not applied."""
    import cv2

    flags = cv2.IMREAD_GRAYSCALE if grey else cv2.IMREAD_COLOR
    return cv2.imread(str(path), flags | cv2.IMREAD_IGNORE_ORIENTATION)


MAX_IMAGE_PIXELS = 1 << 28
"""Largest photo read (268 megapixels, 16384 x 16384): a header claiming more is a decompression bomb."""


def _check_image_size(path: Path) -> None:
    """Refuse an image whose header claims more than ``MAX_IMAGE_PIXELS`` before any decoder allocates them."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PIL's DecompressionBombWarning: the size is checked here
            with Image.open(path) as im:
                w, h = im.size
    except Image.DecompressionBombError as exc:
        raise InputError(path, f"refused as a decompression bomb ({exc})") from None
    except (OSError, ValueError, SyntaxError):
        return  # not for PIL to say: the decoder below decides
    if w * h > MAX_IMAGE_PIXELS:
        raise InputError(
            path, f"claims {w} x {h} pixels, over the {MAX_IMAGE_PIXELS >> 20} megapixels real2sim reads"
        )


def list_images(image_dir: Path) -> list[str]:
    """Image file names in ``image_dir`` (sorted), each checked to decode; corrupt files are an InputError."""
    import cv2

    if not image_dir.is_dir():
        raise InputError(image_dir, "no such image folder")
    names = sorted(p.name for p in image_dir.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
    for n in names:
        _check_image_size(image_dir / n)
        img = cv2.imread(str(image_dir / n), cv2.IMREAD_UNCHANGED)
        if img is None or img.size == 0:
            raise InputError(
                image_dir / n, "cannot be decoded as an image (corrupt or not an image); remove it"
            )
    return names


def _map(image_dir: Path, db: Path, out: Path, cfg: SfmCfg, mapper: str):
    import pycolmap

    fixed = cfg.intrinsics is not None
    if mapper == "global":
        opts = pycolmap.GlobalPipelineOptions()
        opts.random_seed = cfg.seed
        opts.num_threads = 1  # deterministic (see SfmCfg.num_threads)
        ba = opts.mapper.bundle_adjustment
        ba.refine_focal_length = not fixed
        ba.refine_extra_params = not fixed
        ba.ceres.use_gpu = False
        opts.mapper.global_positioning.use_gpu = False
        return pycolmap.global_mapping(db, image_dir, out, opts)
    opts = pycolmap.IncrementalPipelineOptions()
    opts.random_seed = cfg.seed
    opts.num_threads = 1  # deterministic (see SfmCfg.num_threads)
    opts.ba_refine_focal_length = not fixed
    opts.ba_refine_extra_params = not fixed
    opts.mapper.abs_pose_refine_focal_length = not fixed
    opts.mapper.abs_pose_refine_extra_params = not fixed
    return pycolmap.incremental_mapping(db, image_dir, out, opts)


def _best(recs: dict) -> pycolmap.Reconstruction | None:
    if not recs:
        return None
    return max(recs.values(), key=lambda r: (r.num_reg_images(), r.num_points3D()))


def _reason(name: str, kp: dict, pairs: dict, best: dict, other_models: dict[str, int]) -> str:
    if kp.get(name, 0) == 0:
        return "no SIFT features (blank, blurred or textureless image)"
    if pairs.get(name, 0) == 0:
        return "no verified matches with any other image (no overlap)"
    if name in other_models:
        return f"registered only in a separate model of {other_models[name]} images not connected to the main one"
    return f"too weakly connected to register (best pair {best.get(name, 0)} inlier matches)"


def run_sfm(image_dir: str | Path, cfg: SfmCfg = SfmCfg(), work_dir: str | Path | None = None) -> SfmResult:
    """Reconstruct camera poses and sparse points for the images in ``image_dir``.

    Raises ``InputError`` for a missing folder, corrupt images, too few images or images with no overlap.
    """
    import pycolmap

    cfg.validate()
    image_dir = Path(image_dir)
    names = list_images(image_dir)
    if len(names) < cfg.min_images:
        raise InputError(image_dir, f"{len(names)} images found, SfM needs at least {cfg.min_images}")
    pycolmap.logging.minloglevel = 2
    pycolmap.logging.logtostderr = (
        True  # not glog's files in the temporary folder (stderr is captured, see -v)
    )
    pycolmap.set_random_seed(cfg.seed)
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="real2sim-sfm-", dir=work_dir) as tmp:
        db = Path(tmp) / "database.db"
        extract_and_match(image_dir, names, db, cfg, timings)
        kp, pairs, best = db_stats(db)
        if sum(1 for n in names if pairs.get(n, 0) > 0) < 2:
            raise InputError(
                image_dir, "no two images overlap (no verified feature matches); photos must overlap"
            )
        first = cfg.mapper
        if first == "auto":
            first = "incremental" if len(names) <= cfg.incremental_max else "global"
        order = ["incremental", "global"] if first == "incremental" else ["global", "incremental"]
        rec, used, all_recs = None, "", {}
        t = time.perf_counter()
        for m in order:
            out = Path(tmp) / m
            out.mkdir()
            try:
                recs = _map(image_dir, db, out, cfg, m)
            except Exception as exc:  # a mapper that fails outright: try the other one
                log.warning("%s mapping failed (%s); trying the other mapper", m, exc)
                recs = {}
            cand = _best(recs)
            if cand is not None and (rec is None or cand.num_reg_images() > rec.num_reg_images()):
                rec, used, all_recs = cand, m, recs
            # Incremental results are trusted unless they leave most images out (global ones may register every
            # image with wrong poses on repeated texture); a global one is completed by the incremental mapper.
            enough = len(names) if m == "global" else 0.5 * len(names)
            if rec is not None and rec.num_reg_images() >= enough:
                break
        timings["mapping"] = time.perf_counter() - t
        if rec is None or rec.num_reg_images() < 2:
            raise InputError(
                image_dir, "no reconstruction: the images do not overlap enough to register any pair"
            )
        return _result(image_dir, names, rec, all_recs, used, timings, cfg, kp, pairs, best)


def _result(image_dir, names, rec, all_recs, used, timings, cfg, kp, pairs, best) -> SfmResult:
    cams: dict[str, np.ndarray] = {}
    intr: dict[str, Intrinsics] = {}
    pid_index = {pid: i for i, pid in enumerate(sorted(rec.points3D))}
    obs: dict[str, np.ndarray] = {}
    for img in rec.images.values():
        if not img.has_pose:
            continue
        m = np.eye(4)
        m[:3, :] = img.cam_from_world().matrix()
        cams[img.name] = m
        c = img.camera
        intr[img.name] = Intrinsics(
            c.model.name, int(c.width), int(c.height), tuple(float(x) for x in c.params)
        )
        rows = [(p.xy[0], p.xy[1], pid_index[p.point3D_id]) for p in img.points2D if p.has_point3D()]
        obs[img.name] = np.array(rows, dtype=float).reshape(-1, 3)
    pts = np.array([rec.points3D[p].xyz for p in sorted(rec.points3D)], dtype=float).reshape(-1, 3)
    cols = np.array([rec.points3D[p].color for p in sorted(rec.points3D)], dtype=float).reshape(-1, 3) / 255.0
    other = {}
    for r in all_recs.values():
        if r is rec:
            continue
        for img in r.images.values():
            if img.has_pose:
                other[img.name] = r.num_reg_images()
    unreg = {n: _reason(n, kp, pairs, best, other) for n in names if n not in cams}
    warnings = tuple(w for w in (orbit_warning(cams, cfg.intrinsics is not None),) if w)
    return SfmResult(
        image_dir=image_dir,
        images=tuple(names),
        cam_from_world=cams,
        intrinsics=intr,
        points=pts,
        colors=cols,
        unregistered=unreg,
        mapper=used,
        timings=timings,
        warnings=warnings,
        mean_reprojection_error=float(rec.compute_mean_reprojection_error()),
        observations=obs,
        reconstruction=rec,
    )


def _check_intrinsics(vals: tuple[float, ...], what: str) -> None:
    """Focal lengths and principal point [px]: finite and > 0."""
    if not all(math.isfinite(v) and v > 0 for v in vals):
        raise ConfigError(f"{what}: focal lengths and principal point must be finite and > 0 pixels")


def parse_intrinsics(value: str) -> tuple[str, tuple[float, ...]]:
    """Known intrinsics from the command line: ``"fx,fy,cx,cy"`` (PINHOLE), ``"f,cx,cy"`` (SIMPLE_PINHOLE),
    or a Middlebury-style ``*_par.txt`` (``name k11..k33 r11..r33 t1..t3`` per line; only K is used and it must be
    the same for every line). Returns ``(camera_model, params)``."""
    p = Path(value)
    if p.is_file():
        ks = set()
        for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines()):
            parts = line.split()
            if i == 0 and len(parts) == 1:
                continue  # the image count
            if not parts:
                continue
            try:
                k = tuple(float(x) for x in parts[1:10])
            except ValueError:
                raise InputError(p, f"line {i + 1}: expected 'name k11..k33 r11..r33 t1 t2 t3'") from None
            if len(k) != 9 or len(parts) != 22:
                raise InputError(p, f"line {i + 1}: expected 22 fields (name, K, R, t), got {len(parts)}")
            ks.add(k)
        if len(ks) != 1:
            raise InputError(p, f"holds {len(ks)} different K matrices; one shared camera is needed")
        k = ks.pop()
        if abs(k[1]) > 1e-9 or abs(k[3]) > 1e-9 or abs(k[6]) > 1e-9 or abs(k[7]) > 1e-9:
            raise InputError(p, "K has skew or a malformed last row; only PINHOLE intrinsics are supported")
        _check_intrinsics((k[0], k[4], k[2], k[5]), f"--intrinsics {value}")
        return "PINHOLE", (k[0], k[4], k[2], k[5])
    try:
        vals = tuple(float(x) for x in value.split(","))
    except ValueError:
        raise ConfigError(
            f"--intrinsics {value!r}: give 'fx,fy,cx,cy', 'f,cx,cy' or a *_par.txt file"
        ) from None
    if len(vals) in (3, 4):
        _check_intrinsics(vals, f"--intrinsics {value!r}")
        return ("PINHOLE" if len(vals) == 4 else "SIMPLE_PINHOLE"), vals
    raise ConfigError(f"--intrinsics {value!r}: give 'fx,fy,cx,cy', 'f,cx,cy' or a *_par.txt file")


def read_middlebury_poses(path: str | Path) -> dict[str, np.ndarray]:
    """``cam_from_world`` per image name from a Middlebury ``*_par.txt`` (x = K [R | t] X)."""
    out = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) != 22:
            continue
        m = np.eye(4)
        m[:3, :3] = np.array(parts[10:19], dtype=float).reshape(3, 3)
        m[:3, 3] = np.array(parts[19:22], dtype=float)
        out[parts[0]] = m
    return out
