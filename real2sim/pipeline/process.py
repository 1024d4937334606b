"""``real2sim process SESSION/``: run every stage a capture session supports, reusing finished ones.

Layout of the output folder::

    OUT/scene/        reconstruction (scene.json + meshes/)
    OUT/package/      the sim package (MJCF, URDF, assets, report)
    OUT/calibration/  fitted robot parameters, calibrated model, report
    OUT/twin/         the robot composed into the package (when ``[robot]`` has ``twin`` or ``base_pose``)
    OUT/run.json      for each finished stage: the content hash of its inputs and options, and its summary

Stages hand each other typed values in memory (recon's ``Scene`` goes straight to ``export_scene``); the folders
are how a stage is saved and resumed. A stage is skipped when its output exists and ``run.json`` records the same
key (``cache.stage_key``). Every stage writes its folder atomically, so an interrupted run leaves no corrupt output.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from real2sim.atomic import claim_folder
from real2sim.errors import ConfigError, InputError, Real2SimError
from real2sim.executor import ExecutorCfg, run_map
from real2sim.outguard import MARKER, check_output, remove_created
from real2sim.pipeline.background import Background
from real2sim.pipeline.cache import hashed_options, stage_key
from real2sim.pipeline.config import ProcessCfg
from real2sim.pipeline.recon_stage import recon_lidar, recon_photos, recon_splat
from real2sim.pipeline.runner import StageRun, StageRunner
from real2sim.pipeline.session import Session, load_session
from real2sim.pipeline.summary import (
    CalibrationSummary,
    PackageSummary,
    SceneSummary,
    TwinSummary,
)
from real2sim.scene import Scene, load_scene, sanitize_name

PROCESS_ENTRIES = ("scene", "package", "calibration", "twin", "run.json")
"""What ``process`` writes into its output folder."""
S = TypeVar("S", SceneSummary, PackageSummary, CalibrationSummary, TwinSummary)


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

    def summary(self, name: str, kind: type[S]) -> S | None:
        """The typed summary of stage ``name`` if it ran, else None."""
        for s in self.stages:
            if s.name == name:
                assert isinstance(s.summary, kind)
                return s.summary
        return None


def _session_inputs(s: Session) -> list[Path | None]:
    """Every file and folder the session reads (some may lie outside its folder)."""
    robot = [s.robot.model, s.robot.map, *s.robot.logs, *s.robot.holdout] if s.robot else []
    return [s.root, *s.lidar, s.lidar_poses, s.images, s.known_distance, *s.splats, *robot]


def run_process(cfg: ProcessCfg) -> ProcessResult:
    """Run reconstruction, export and calibration on whatever the session holds.

    The output folder must be new, empty or real2sim's (``outguard``); one this run created is removed again
    when the run fails before any stage finished.
    """
    cfg.validate()
    check_output(cfg.out_dir, [cfg.session_dir], overwrite=cfg.overwrite)
    session = load_session(cfg.session_dir)
    if not session.sources:
        raise InputError(
            session.root,
            "holds nothing to process (expected lidar/, images/, splats/ or a [robot] in session.toml)",
        )
    out = check_output(cfg.out_dir, _session_inputs(session), overwrite=cfg.overwrite)
    existed = out.exists()
    created = claim_folder(out, PROCESS_ENTRIES)
    try:
        return _run_with_runner(cfg, session)
    except BaseException:
        if not existed and set(os.listdir(out)) <= {MARKER}:
            shutil.rmtree(out, ignore_errors=True)
            remove_created(created)
        raise


def _run_with_runner(cfg: ProcessCfg, session: Session) -> ProcessResult:
    r = StageRunner(cfg)
    started: list[Background[CalibrationSummary]] = []
    try:
        return _run_stages(r, session, started)
    except BaseException:
        for b in started:
            b.cancel()
        raise


def _run_stages(
    r: StageRunner, session: Session, started: list[Background[CalibrationSummary]]
) -> ProcessResult:
    cfg = r.cfg
    notes: list[str] = []
    scene_dir = r.out / "scene"
    scene: Scene | None = None
    if "recon" in cfg.stages:
        if session.lidar:
            scene = recon_lidar(r, session, scene_dir)
        elif session.images is not None:
            scene = recon_photos(r, session, scene_dir)
        elif session.splats:
            scene = recon_splat(r, session, scene_dir)
        else:
            notes.append("recon: the session has no scans, photos or splats")
        if session.lidar and session.images is not None and session.colour_scans is not False:
            notes.append("recon: scans used; the photos colour their meshes when the scans carry no colour")
        elif session.lidar and (session.images is not None or session.splats):
            notes.append("recon: scans used; photos/splats of the same scene are not fused yet")
    calibration = None
    if "export" in cfg.stages and scene_dir.is_dir():
        ecfg, ekey = _export_job(r, session, scene_dir, r.out / "package")
        if r.reused("export", r.out / "package", ekey) is None and _objects_at_once(r, scene) > 1:
            calibration = _start_calibration(r, session)  # beside export's single-threaded object workers
            started += [calibration] if calibration is not None else []
        _export(r, session, scene, scene_dir, ecfg, ekey)
    if "calibrate" in cfg.stages:
        if session.robot is not None:
            _calibrate(r, session, r.out / "calibration", calibration)
        else:
            notes.append("calibrate: no [robot] section in session.toml")
    if "twin" in cfg.stages and session.robot is not None and session.robot.twin:
        from real2sim.pipeline.twin_stage import run_twin_stage

        notes += run_twin_stage(r, session)
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
    parents = {Path(c.out_dir).parent for c in cfgs}
    if len(parents) == 1:  # OUT/<session>/...: OUT is an output folder too
        parent = parents.pop()
        check_output(parent, [c.session_dir for c in cfgs], overwrite=all(c.overwrite for c in cfgs))
        claim_folder(parent, [Path(c.out_dir).name for c in cfgs])
    inner = [dataclasses.replace(c, workers=1) for c in cfgs]
    return run_map(_process_one, inner, executor or ExecutorCfg(), label="sessions")


def _export_job(r: StageRunner, s: Session, scene_dir: Path, pkg_dir: Path) -> tuple[Any, str]:
    """The export's config and stage key."""
    from real2sim.export.config import ExportCfg

    name = sanitize_name(s.name)
    known = object_options(s)
    cfg = ExportCfg(
        scene_dir=scene_dir,
        out_dir=pkg_dir,
        name=name,
        workers=r.cfg.workers,
        overwrite=r.cfg.overwrite,
        mass=known["mass"],
        density=known["density"],
        friction=known["friction"],
        material=known["material"],
    )
    return cfg, stage_key("export", [scene_dir], hashed_options(cfg))


def _export(r: StageRunner, s: Session, scene: Scene | None, scene_dir: Path, cfg: Any, key: str) -> None:
    from real2sim.export.package import export_scene

    pkg_dir = cfg.out_dir

    def work() -> PackageSummary:
        # the recon of this run hands its Scene over; a reused recon's scene is loaded from its folder
        sc = scene if scene is not None else load_scene(scene_dir)
        check_object_names(s, sc)
        return PackageSummary.of(export_scene(sc, pkg_dir, cfg))

    r.run("export", pkg_dir, key, work)


def object_options(s: Session) -> dict[str, tuple[str, ...]]:
    """The session's ``[objects.NAME]`` values as ``ExportCfg``'s ``mass``, ``density``, ``friction`` and
    ``material`` (``NAME=VALUE`` strings, as the export options take them)."""
    out: dict[str, tuple[str, ...]] = {}
    for key in ("mass", "density", "friction", "material"):
        vals = [(n, getattr(g, key)) for n, g in s.object_values.items()]
        out[key] = tuple(f"{n}={v if isinstance(v, str) else repr(v)}" for n, v in vals if v is not None)
    return out


def check_object_names(s: Session, scene: Scene) -> None:
    """``InputError`` on ``session.toml`` for an ``[objects.NAME]`` that names no object of the scene."""
    from real2sim.export.physics.values import unknown_object

    names = [o.name for o in scene.objects]
    bodies = {sanitize_name(n) for n in names}
    for n in s.object_values:
        if n not in names and n not in bodies:
            raise InputError(s.root / "session.toml", f"[objects.{n}]: {unknown_object(n, names)}")


def _objects_at_once(r: StageRunner, scene: Scene | None) -> int:
    """Objects export decomposes at once (its pool's size; each object then runs single-threaded)."""
    return ExecutorCfg(workers=r.cfg.workers).pool_size(len(scene.objects)) if scene is not None else 1


def _start_calibration(r: StageRunner, s: Session) -> Background[CalibrationSummary] | None:
    """The calibration (it needs neither recon nor export) started in its own single-threaded process, to run beside
    export's object workers, when this run calibrates without writing into its package and cannot reuse a previous
    calibration; else None (it then runs after export). Beside recon it would not pay: recon's OpenMP thread teams
    slow down badly when a third process competes for 2 cores (docs/speed.md)."""
    if "calibrate" not in r.cfg.stages or s.robot is None or r.cfg.calibration_package:
        return None
    try:
        cfg, key = _calibrate_job(r, s, r.out / "calibration")
    except Real2SimError:
        return None  # reported when the stage runs, after export, as before
    if r.reused("calibrate", r.out / "calibration", key) is not None:
        return None
    return Background(calibration_summary, cfg, "calibrate", threads=1)


def calibration_summary(cfg: Any) -> CalibrationSummary:
    from real2sim.calibration.run import run_calibrate
    from real2sim.results import CalibrationResult

    res = run_calibrate(cfg)
    if not isinstance(res, CalibrationResult):
        raise InputError(
            cfg.map, "a session calibrates its robot's joints; fit free bodies with real2sim calibrate"
        )
    return CalibrationSummary.of(res)


def _calibrate(
    r: StageRunner, s: Session, out: Path, started: Background[CalibrationSummary] | None = None
) -> None:
    cfg, key = _calibrate_job(r, s, out)
    if started is not None:
        r.run_timed("calibrate", out, key, started.result)
    else:
        r.run("calibrate", out, key, lambda: calibration_summary(cfg))


def _calibrate_job(r: StageRunner, s: Session, out: Path) -> tuple[Any, str]:
    """The calibration's config and stage key."""
    from real2sim.calibration.config import CalibrateCfg

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
        overwrite=r.cfg.overwrite,
        max_windows=r.cfg.calibration_max_windows,
        package=r.out / "package" if r.cfg.calibration_package else None,
    )
    opts = hashed_options(cfg)
    if cfg.package is not None:  # a re-exported package needs the values written again
        opts["package"] = r.record.data["stages"].get("export", {}).get("key")
    key = stage_key("calibrate", [rb.model, rb.map, *rb.logs, *rb.holdout], opts)
    return cfg, key
