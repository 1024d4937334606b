"""``real2sim process SESSION/``: run every stage a capture session supports, reusing finished ones.

Layout of the output folder::

    OUT/scene/        reconstruction (scene.json + meshes/)
    OUT/package/      the sim package (MJCF, URDF, assets, report)
    OUT/calibration/  fitted robot parameters, calibrated model, report
    OUT/run.json      for each finished stage: the content hash of its inputs and options, and its summary

A stage is skipped when its output exists and ``run.json`` records the same key (inputs' bytes + options +
real2sim version). Every stage writes its folder atomically, so an interrupted run leaves no corrupt output.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from real2sim import __version__
from real2sim.atomic import write_json
from real2sim.errors import ConfigError, InputError
from real2sim.executor import ExecutorCfg, run_map
from real2sim.provenance import sha256_file
from real2sim.session import Session, load_session

STAGES = ("recon", "export", "calibrate")


@dataclass(frozen=True)
class ProcessCfg:
    """What ``process`` runs and where it writes."""

    session_dir: Path
    """The capture session folder (DESIGN §5)."""
    out_dir: Path
    """Output folder (scene/, package/, calibration/, run.json)."""
    stages: tuple[str, ...] = STAGES
    """Stages to run, in order; a stage whose inputs the session lacks is skipped with a note."""
    workers: int = 0
    """Worker processes for per-object work (0 = one per core)."""
    force: bool = False
    """Re-run stages even when their inputs and options are unchanged."""
    calibration_max_windows: int | None = None
    """Cap on multiple-shooting windows per calibration (None = all); a faster, coarser fit."""

    def validate(self) -> None:
        bad = [s for s in self.stages if s not in STAGES]
        if bad:
            raise ConfigError(f"unknown stage(s) {', '.join(bad)}; stages are {', '.join(STAGES)}")
        if self.workers < 0:
            raise ConfigError(f"--workers must be >= 0, got {self.workers}")


@dataclass(frozen=True)
class StageRun:
    """One stage of a process run: where it wrote, how long it took, whether it was reused, what it found."""

    name: str
    output: Path
    seconds: float
    reused: bool
    summary: dict[str, Any]


@dataclass(frozen=True)
class ProcessResult:
    session: Session
    out_dir: Path
    stages: tuple[StageRun, ...]
    notes: tuple[str, ...] = ()

    def stage(self, name: str) -> StageRun:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(f"stage {name!r} did not run; ran: {', '.join(s.name for s in self.stages)}")


def _hash_paths(paths: list[Path]) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in paths:
        if p.is_dir():
            for f in sorted(q for q in p.rglob("*") if q.is_file()):
                out[str(f.relative_to(p.parent))] = sha256_file(f)
        elif p.is_file():
            out[p.name] = sha256_file(p)
    return out


def _key(stage: str, inputs: list[Path], options: dict[str, Any]) -> str:
    blob = json.dumps(
        {"stage": stage, "version": __version__, "inputs": _hash_paths(inputs), "options": options},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _options(cfg: Any) -> dict[str, Any]:
    d = dataclasses.asdict(cfg)
    for k in (
        "out_dir",
        "scene_dir",
        "inputs",
        "model",
        "logs",
        "holdout",
        "map",
        "poses",
        "image_dir",
        "known_distance",
    ):
        d.pop(k, None)  # paths are covered by the input hashes; the output path doesn't change results
    return d


class _Runner:
    def __init__(self, cfg: ProcessCfg):
        self.cfg = cfg
        self.out = Path(cfg.out_dir).absolute()
        self.record_path = self.out / "run.json"
        self.record: dict[str, Any] = {"stages": {}}
        if self.record_path.is_file():
            try:
                self.record = json.loads(self.record_path.read_text())
            except json.JSONDecodeError:
                self.record = {"stages": {}}
        self.runs: list[StageRun] = []

    def run(self, name: str, output: Path, key: str, work: Callable[[], dict[str, Any]]) -> StageRun:
        prev = self.record["stages"].get(name)
        t0 = time.perf_counter()
        if not self.cfg.force and prev and prev.get("key") == key and output.exists():
            run = StageRun(name, output, time.perf_counter() - t0, True, prev.get("summary", {}))
        else:
            summary = work()
            run = StageRun(name, output, time.perf_counter() - t0, False, summary)
            self.record["stages"][name] = {"key": key, "output": output.name, "summary": summary}
            self.out.mkdir(parents=True, exist_ok=True)
            write_json(self.record_path, self.record)
        self.runs.append(run)
        return run


def run_process(cfg: ProcessCfg) -> ProcessResult:
    """Run reconstruction, export and calibration on whatever the session holds."""
    cfg.validate()
    session = load_session(cfg.session_dir)
    if not session.sources:
        raise InputError(
            session.root,
            "holds nothing to process (expected lidar/, images/, splats/ or a [robot] in session.toml)",
        )
    r = _Runner(cfg)
    notes: list[str] = []
    scene_dir = r.out / "scene"
    if "recon" in cfg.stages:
        if session.lidar:
            _recon_lidar(r, session, scene_dir)
        elif session.images is not None:
            _recon_photos(r, session, scene_dir)
        elif session.splats:
            _recon_splat(r, session, scene_dir)
        else:
            notes.append("recon: the session has no scans, photos or splats")
        if session.lidar and (session.images is not None or session.splats):
            notes.append("recon: scans used; photos/splats of the same scene are not fused yet")
    if "export" in cfg.stages and scene_dir.is_dir():
        _export(r, session, scene_dir, r.out / "package")
    if "calibrate" in cfg.stages:
        if session.robot is not None:
            _calibrate(r, session, r.out / "calibration")
        else:
            notes.append("calibrate: no [robot] section in session.toml")
    return ProcessResult(session, r.out, tuple(r.runs), tuple(notes))


def _process_one(cfg: ProcessCfg) -> ProcessResult:
    return run_process(cfg)


def run_batch(cfgs: list[ProcessCfg], executor: ExecutorCfg | None = None) -> list[ProcessResult]:
    """Several sessions at once: one per worker process (or Ray task); results in the order given.

    Each session then runs its own per-object work in its worker (``workers=1`` inside), so a local pool does not
    oversubscribe the cores.
    """
    for c in cfgs:
        c.validate()
    outs = [Path(c.out_dir).absolute() for c in cfgs]
    if len(set(outs)) != len(outs):
        raise ConfigError("two sessions would write the same output folder; give sessions distinct names")
    if len(cfgs) == 1:
        return [run_process(cfgs[0])]
    inner = [dataclasses.replace(c, workers=1) for c in cfgs]
    return run_map(_process_one, inner, executor or ExecutorCfg(), label="sessions")


def _scene_summary(scene_dir: Path) -> dict[str, Any]:
    from real2sim.scene import load_scene

    scene = load_scene(scene_dir)
    objs = []
    for o in scene.objects:
        ext = o.mesh.extents
        objs.append(
            {
                "name": o.name,
                "extent_m": [round(float(x), 4) for x in ext],
                "volume_m3": float(o.mesh.volume),
                "watertight": bool(o.mesh.is_watertight),
                "position_m": [round(float(x), 4) for x in o.world_from_object[:3, 3]],
            }
        )
    return {"objects": objs, "support": scene.support.kind}


def _recon_lidar(r: _Runner, s: Session, scene_dir: Path) -> None:
    from real2sim.recon.pointcloud import run_recon_pointcloud
    from real2sim.recon.pointcloud_cfg import PointCloudReconCfg

    cfg = PointCloudReconCfg(
        inputs=tuple(s.lidar),
        out_dir=scene_dir,
        units=s.lidar_units,
        poses=s.lidar_poses,
        save_point_labels=True,
        density=s.density,
        friction=(s.friction, 0.005, 0.0001),
    )
    key = _key("recon", [*s.lidar, *([s.lidar_poses] if s.lidar_poses else [])], _options(cfg))

    def work() -> dict[str, Any]:
        run_recon_pointcloud(cfg)
        return {"source": "lidar", **_scene_summary(scene_dir)}

    r.run("recon", scene_dir, key, work)


def _recon_photos(r: _Runner, s: Session, scene_dir: Path) -> None:
    from real2sim.recon.photos import PhotosReconCfg, run_recon_photos

    assert s.images is not None
    kw: dict[str, Any] = {"image_dir": s.images, "out_dir": scene_dir}
    if s.marker is not None:
        kw.update(marker_size=s.marker.size, marker_dictionary=s.marker.dictionary, marker_id=s.marker.id)
    if s.known_distance is not None:
        kw["known_distance"] = s.known_distance
    cfg = PhotosReconCfg(**kw)
    key = _key(
        "recon", [s.images] + ([s.known_distance] if s.known_distance is not None else []), _options(cfg)
    )

    def work() -> dict[str, Any]:
        run_recon_photos(cfg)
        return {"source": "photos", **_scene_summary(scene_dir)}

    r.run("recon", scene_dir, key, work)


def _recon_splat(r: _Runner, s: Session, scene_dir: Path) -> None:
    from real2sim.recon.splat_recon import SplatReconCfg, run_recon_splat

    cfg = SplatReconCfg(input=s.splats[0], out_dir=scene_dir)
    key = _key("recon", [s.splats[0]], _options(cfg))

    def work() -> dict[str, Any]:
        run_recon_splat(cfg)
        return {"source": "splat", **_scene_summary(scene_dir)}

    r.run("recon", scene_dir, key, work)


def _export(r: _Runner, s: Session, scene_dir: Path, pkg_dir: Path) -> None:
    from real2sim.export.config import ExportCfg
    from real2sim.export.package import run_export

    cfg = ExportCfg(scene_dir=scene_dir, out_dir=pkg_dir, name=_model_name(s.name), workers=r.cfg.workers)
    key = _key("export", [scene_dir], _options(cfg))

    def work() -> dict[str, Any]:
        pkg = run_export(cfg)
        return {
            "mjcf": pkg.mjcf.name,
            "scene_xml": pkg.scene_xml.name,
            "urdf": pkg.urdf.name if pkg.urdf else None,
            "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail} for c in pkg.checks],
        }

    r.run("export", pkg_dir, key, work)


def _calibrate(r: _Runner, s: Session, out: Path) -> None:
    from real2sim.calibration.run import CalibrateCfg, run_calibrate

    rb = s.robot
    assert rb is not None
    if not rb.fit:
        raise InputError(s.root / "session.toml", "[robot] needs fit = [...] (the parameters to calibrate)")
    cfg = CalibrateCfg(
        model=rb.model,
        logs=rb.logs,
        map=rb.map,
        fit=rb.fit,
        holdout=rb.holdout,
        out_dir=out,
        max_windows=r.cfg.calibration_max_windows,
    )
    key = _key("calibrate", [rb.model, rb.map, *rb.logs, *rb.holdout], _options(cfg))

    def work() -> dict[str, Any]:
        res = run_calibrate(cfg)
        return {
            "parameters": {
                p.name: {"value": float(v), "stderr": _finite_or_none(e)}
                for p, v, e in zip(res.params, res.values, res.stderr, strict=True)
            },
            "cost": {"initial": float(res.cost_initial), "final": float(res.cost_final)},
            "logs": {
                lg.file: {"split": lg.split, "rmse_qpos": lg.rmse_qpos, "rmse_qvel": lg.rmse_qvel}
                for lg in res.logs
            },
            "warnings": list(res.warnings),
        }

    r.run("calibrate", out, key, work)


def _finite_or_none(x: float) -> float | None:
    """JSON has no inf: an unidentifiable parameter's standard error is written as null."""
    return float(x) if math.isfinite(x) else None


def _model_name(name: str) -> str:
    from real2sim.scene import sanitize_name

    return sanitize_name(name)
