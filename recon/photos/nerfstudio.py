"""nerfstudio route: write a nerfstudio dataset (``transforms.json`` + ``images/``) from an SfM result, and run
``ns-train splatfacto`` / ``ns-export gaussian-splat`` when they are installed (their own environment, a GPU).

``transforms.json`` follows nerfstudio's data conventions: ``camera_model`` (``OPENCV`` or ``PINHOLE``),
intrinsics ``fl_x fl_y cx cy w h`` [px] and distortion ``k1 k2 p1 p2`` at the top level when all frames share one
camera (else per frame), and per frame ``file_path`` (relative) and ``transform_matrix``: the 4x4 camera-to-world
pose in the OpenGL camera convention (x right, y up, z back; OpenCV's y and z axes negated).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np

from real2sim.atomic import write_json
from real2sim.errors import NotBuiltError, StageError
from real2sim.recon.photos.sfm import Intrinsics, SfmResult

OPENCV_TO_OPENGL = np.diag([1.0, -1.0, -1.0, 1.0])
INSTALL_HINT = (
    "nerfstudio is not installed (ns-train / ns-export not on PATH): install it in its own environment with "
    "CUDA (pip install nerfstudio; see docs.nerf.studio) to train splatfacto, or train elsewhere and run "
    "`real2sim recon splat FILE.ply`"
)


def _camera_fields(intr: Intrinsics) -> dict:
    k = intr.K
    d = intr.dist_coeffs
    out = {"camera_model": "OPENCV" if np.any(d != 0) else "PINHOLE",
           "fl_x": float(k[0, 0]), "fl_y": float(k[1, 1]), "cx": float(k[0, 2]), "cy": float(k[1, 2]),
           "w": int(intr.width), "h": int(intr.height)}  # fmt: skip
    if out["camera_model"] == "OPENCV":
        out.update(k1=float(d[0]), k2=float(d[1]), p1=float(d[2]), p2=float(d[3]))
    return out


def transforms_json(
    sfm: SfmResult, world_from_sfm: np.ndarray | None = None, image_prefix: str = "images/"
) -> dict:
    """The ``transforms.json`` content for the registered images (poses mapped by ``world_from_sfm``, a
    similarity, when given)."""
    from real2sim.recon.photos.align import Similarity

    sim = None
    if world_from_sfm is not None:
        a = np.asarray(world_from_sfm, dtype=float)
        s = float(np.cbrt(np.linalg.det(a[:3, :3])))
        sim = Similarity(s, a[:3, :3] / s, a[:3, 3])
    names = sfm.registered
    cams = [_camera_fields(sfm.intrinsics[n]) for n in names]
    shared = all(c == cams[0] for c in cams)
    out: dict = dict(cams[0]) if shared else {}
    frames = []
    for n, cam in zip(names, cams, strict=True):
        cfw = sfm.cam_from_world[n]
        if sim is not None:
            cfw = sim.apply_to_cam_from_world(cfw)
        c2w = np.linalg.inv(cfw) @ OPENCV_TO_OPENGL
        fr = {"file_path": f"{image_prefix}{n}", "transform_matrix": c2w.tolist()}
        if not shared:
            fr.update(cam)
        frames.append(fr)
    out["frames"] = frames
    return out


def write_nerfstudio_dataset(
    sfm: SfmResult, out_dir: str | Path, world_from_sfm: np.ndarray | None = None
) -> Path:
    """Write ``transforms.json`` and copy the registered images into ``out_dir/images``."""
    out_dir = Path(out_dir)
    (out_dir / "images").mkdir(parents=True, exist_ok=True)
    for n in sfm.registered:
        shutil.copyfile(sfm.image_dir / n, out_dir / "images" / n)
    write_json(out_dir / "transforms.json", transforms_json(sfm, world_from_sfm))
    return out_dir / "transforms.json"


def nerfstudio_available() -> bool:
    return shutil.which("ns-train") is not None and shutil.which("ns-export") is not None


def train_splatfacto(dataset: Path, work_dir: Path, max_iters: int = 30000) -> Path:
    """Train splatfacto on ``dataset`` and export the splat PLY; returns its path. Without nerfstudio on PATH:
    ``NotBuiltError`` with one line saying what to install."""
    if not nerfstudio_available():
        raise NotBuiltError(INSTALL_HINT)
    runs = work_dir / "ns_runs"
    cmd = ["ns-train", "splatfacto", "--data", str(dataset), "--output-dir", str(runs),
           "--max-num-iterations", str(max_iters), "--viewer.quit-on-train-completion", "True",
           "nerfstudio-data", "--orientation-method", "none", "--center-method", "none", "--auto-scale-poses",
           "False"]  # fmt: skip
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise StageError(
            f"ns-train failed: {res.stderr.strip().splitlines()[-1] if res.stderr else res.returncode}"
        )
    configs = sorted(runs.rglob("config.yml"))
    if not configs:
        raise StageError(f"ns-train wrote no config.yml under {runs}")
    export = work_dir / "splat"
    res = subprocess.run(["ns-export", "gaussian-splat", "--load-config", str(configs[-1]), "--output-dir",
                          str(export)], capture_output=True, text=True, check=False)  # fmt: skip
    plys = sorted(export.glob("*.ply"))
    if res.returncode != 0 or not plys:
        raise StageError(f"ns-export gaussian-splat failed ({res.returncode}); see {export}")
    return plys[0]
