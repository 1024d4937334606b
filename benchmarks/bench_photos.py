"""Benchmark: photos → cameras (→ scale → dense → scene) with real2sim beside plain pycolmap with default options.

Per dataset and method: registered views, per-stage times, and accuracy against the ground truth after a similarity
alignment of the camera centres (median / max rotation error, median centre error in % of the ring radius, the
rotation offset every camera shares). On the sample session also the marker scale against the truth and, for
real2sim, the dense CPU path's object meshes (symmetric Chamfer to the true meshes).

    python benchmarks/bench_photos.py                 # temple ring (19 real views) + sample session + mouse_table
    python benchmarks/bench_photos.py --datasets mouse_table   # one dataset (59 real phone photos, ~10 min)
    python benchmarks/bench_photos.py --quick         # CI smoke: 6 temple views, poses only (< 60 s)
    python benchmarks/bench_photos.py --json out.json
    python benchmarks/bench_photos.py --datasets mouse_table --overlays DIR   # + silhouette overlay PNGs
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
TEMPLE = ROOT.parent / "shared" / "data" / "photos" / "temple_ring"
SAMPLE = ROOT / "sample_data"
MOUSE = ROOT.parent / "shared" / "data" / "photos" / "mouse_table"


def plain_pycolmap(image_dir: Path, work: Path) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """pycolmap with its default options: SIFT, exhaustive matching, incremental mapping; largest model."""
    import pycolmap

    pycolmap.logging.minloglevel = 2
    db = work / "plain.db"
    t: dict[str, float] = {}
    t0 = time.perf_counter()
    pycolmap.extract_features(db, image_dir, camera_mode=pycolmap.CameraMode.SINGLE)
    t["features"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    pycolmap.match_exhaustive(db)
    t["matching"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    (work / "plain").mkdir()
    recs = pycolmap.incremental_mapping(db, image_dir, work / "plain")
    t["mapping"] = time.perf_counter() - t0
    cams: dict[str, np.ndarray] = {}
    if recs:
        rec = max(recs.values(), key=lambda r: r.num_reg_images())
        for img in rec.images.values():
            if img.has_pose:
                m = np.eye(4)
                m[:3, :] = img.cam_from_world().matrix()
                cams[img.name] = m
    return cams, t


def _accuracy(cams: dict[str, np.ndarray], ref: dict[str, np.ndarray]) -> dict:
    from real2sim.recon.photos.align import pose_errors

    if len(set(cams) & set(ref)) < 3:
        return {"n": len(set(cams) & set(ref))}
    e = pose_errors(cams, ref)
    s = e.summary()
    s["median_centre_error_pct_radius"] = 100 * s.pop("median_centre_error_rel_radius")
    s["scale_to_truth"] = e.alignment.scale
    return s


def _subset(src: Path, names: list[str], work: Path) -> Path:
    d = work / "images"
    d.mkdir()
    for n in names:
        shutil.copy(src / n, d / n)
    return d


def bench_temple(work: Path, quick: bool) -> list[dict]:
    from real2sim.recon.photos.run import PhotosReconCfg, run_recon_photos
    from real2sim.recon.photos.sfm import SfmCfg, parse_intrinsics, read_middlebury_poses

    par = TEMPLE / "templeR_par.txt"
    ref = read_middlebury_poses(par)
    names = sorted(n for n in ref if (TEMPLE / n).is_file())  # the par file lists the full ring
    names = names[:6] if quick else names
    images = _subset(TEMPLE, names, work)
    rows = []
    t0 = time.perf_counter()
    cams, t = plain_pycolmap(images, work)
    rows.append({"dataset": "temple_ring", "method": "plain pycolmap (defaults)", "images": len(names),
                 "registered": len(cams), "total_s": time.perf_counter() - t0, "stages_s": t,
                 **_accuracy(cams, ref)})  # fmt: skip
    model, params = parse_intrinsics(str(par))
    for label, sfm in (("real2sim (self-calibrated)", SfmCfg()),
                       ("real2sim --intrinsics", SfmCfg(camera_model=model, intrinsics=params))):  # fmt: skip
        t0 = time.perf_counter()
        res = run_recon_photos(PhotosReconCfg(image_dir=images, sfm=sfm, poses_only=True))
        rows.append({"dataset": "temple_ring", "method": label + " --poses-only", "images": len(names),
                     "registered": len(res.sfm.registered), "total_s": time.perf_counter() - t0,
                     "stages_s": dict(res.sfm.timings), **_accuracy(res.sfm.cam_from_world, ref)})  # fmt: skip
    if not quick:
        t0 = time.perf_counter()
        res = run_recon_photos(PhotosReconCfg(image_dir=images, sfm=SfmCfg(camera_model=model, intrinsics=params),
                                              object_only=True))  # fmt: skip
        mesh = res.scene.objects[0].mesh if res.scene is not None and res.scene.objects else None
        rows.append({"dataset": "temple_ring", "method": "real2sim --intrinsics --object-only (dense cpu)",
                     "images": len(names), "registered": len(res.sfm.registered),
                     "total_s": time.perf_counter() - t0, "stages_s": dict(res.sfm.timings),
                     "watertight": bool(mesh is not None and mesh.is_watertight),
                     "faces": 0 if mesh is None else len(mesh.faces)})  # fmt: skip
    return rows


def bench_sample(work: Path, session: Path) -> list[dict]:
    from tests.helpers.accuracy import evaluate_photos

    gt = json.loads((session / "ground_truth.json").read_text())
    ref = {Path(i["file"]).name: np.asarray(i["cam_from_world"]) for i in gt["images"]}
    rows = []
    t0 = time.perf_counter()
    cams, t = plain_pycolmap(session / "images", work)
    rows.append({"dataset": session.name, "method": "plain pycolmap (defaults)", "images": len(ref),
                 "registered": len(cams), "total_s": time.perf_counter() - t0, "stages_s": t,
                 **_accuracy(cams, ref)})  # fmt: skip
    t0 = time.perf_counter()
    ev = evaluate_photos(session, work / "scene")
    res = ev["result"]
    rows.append({"dataset": session.name, "method": "real2sim --marker-size 0.08 (dense cpu)", "images": len(ref),
                 "registered": len(res.sfm.registered), "total_s": time.perf_counter() - t0,
                 "stages_s": dict(res.sfm.timings), **_accuracy(res.sfm.cam_from_world, ref),
                 "marker_scale_error_pct": 100 * (ev["scale_vs_truth"] - 1),
                 "marker_scale_sigma_pct": 100 * res.scale.sigma / res.scale.scale,
                 "chamfer_mm": {k: round(1000 * v, 2) for k, v in ev["chamfer"].items()}})  # fmt: skip
    return rows


def bench_mouse(work: Path, overlays: Path | None = None) -> list[dict]:
    """Real phone photos (portrait + landscape) against the author's COLMAP model: plain pycolmap, then the full
    real2sim route with default options (dense cpu, table, one object, export + validate); the object's extents
    over the author's points on the mouse, and its silhouette against the mouse's mask in the photos
    (``mouse_ref.silhouette_check``)."""
    from real2sim.export.config import ExportCfg
    from real2sim.export.package import export_scene
    from real2sim.export.validate import validate_package
    from real2sim.recon.photos.run import PhotosReconCfg, run_recon_photos
    from real2sim.scene import load_scene
    from tests.helpers.mouse_ref import evaluate_mouse_scene, reference_model, silhouette_check

    images = MOUSE / "images"
    n = len(list(images.glob("*.jpg")))
    ref, _ = reference_model(MOUSE)
    rows = []
    t0 = time.perf_counter()
    cams, t = plain_pycolmap(images, work)
    rows.append({"dataset": "mouse_table", "method": "plain pycolmap (defaults)", "images": n,
                 "registered": len(cams), "total_s": time.perf_counter() - t0, "stages_s": t,
                 **_accuracy(cams, ref)})  # fmt: skip
    t0 = time.perf_counter()
    res = run_recon_photos(PhotosReconCfg(image_dir=images, out_dir=work / "scene"))
    total = time.perf_counter() - t0
    ev = evaluate_mouse_scene(work / "scene", MOUSE)
    sil = silhouette_check(work / "scene", MOUSE, overlays=overlays)
    export_scene(
        load_scene(work / "scene"), work / "pkg", ExportCfg(scene_dir=work / "scene", out_dir=work / "pkg")
    )
    failed = [c.name for c in validate_package(work / "pkg") if c.failed]
    rows.append({"dataset": "mouse_table", "method": "real2sim (defaults, dense cpu)", "images": n,
                 "registered": len(res.sfm.registered), "total_s": total, "stages_s": dict(res.sfm.timings),
                 **_accuracy(res.sfm.cam_from_world, ref), "objects": ev["objects"], "silhouette": sil,
                 "package_checks_failed": failed})  # fmt: skip
    return rows


def _print(rows: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    tab = Table(title="photos benchmark")
    for c in ("dataset", "method", "reg", "total s", "stages s", "med rot °", "max rot °", "centre % r", "shared °",
              "other"):  # fmt: skip
        tab.add_column(c)
    for r in rows:
        other = {k: r[k] for k in ("marker_scale_error_pct", "marker_scale_sigma_pct", "chamfer_mm", "watertight",
                                   "objects", "silhouette", "package_checks_failed") if k in r}  # fmt: skip

        def f(k: str, r: dict = r) -> str:
            return f"{r[k]:.3f}" if isinstance(r.get(k), float) else "-"

        tab.add_row(r["dataset"], r["method"], f"{r['registered']}/{r['images']}", f"{r['total_s']:.1f}",
                    " ".join(f"{k}={v:.1f}" for k, v in r["stages_s"].items()), f("median_rotation_deg"),
                    f("max_rotation_deg"), f("median_centre_error_pct_radius"), f("shared_offset_deg"),
                    json.dumps(other))  # fmt: skip
    Console(width=200).print(tab)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="6 temple views, poses only (CI smoke)")
    ap.add_argument(
        "--session", type=Path, default=SAMPLE, help="sample session folder (default sample_data)"
    )
    ap.add_argument("--json", type=Path, default=None, help="write the rows as JSON here")
    ap.add_argument(
        "--overlays", type=Path, default=None, help="mouse_table: write the silhouette overlays here"
    )
    ap.add_argument("--datasets", default="temple,sample,mouse_table", help="comma-separated subset to run")
    args = ap.parse_args(argv)
    todo = set(args.datasets.split(","))
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench-photos-") as tmp:
        if "temple" in todo:
            (Path(tmp) / "temple").mkdir()
            rows += bench_temple(Path(tmp) / "temple", args.quick)
        if not args.quick and "sample" in todo:
            (Path(tmp) / "sample").mkdir()
            rows += bench_sample(Path(tmp) / "sample", args.session)
        if not args.quick and "mouse_table" in todo and MOUSE.is_dir():
            (Path(tmp) / "mouse").mkdir()
            rows += bench_mouse(Path(tmp) / "mouse", args.overlays)
    _print(rows)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
