"""``real2sim process SESSION/``: run every stage a capture session supports, reusing finished ones.

Layout of the output folder::

    OUT/scene/        reconstruction (scene.json + meshes/)
    OUT/package/      the sim package (MJCF, URDF, assets, report)
    OUT/calibration/  fitted robot parameters, calibrated model, report
    OUT/run.json      for each finished stage: the content hash of its inputs and options, and its summary

Stages hand each other typed values in memory (recon's ``Scene`` goes straight to ``export_scene``); the folders
are how a stage is saved and resumed. A stage is skipped when its output exists and ``run.json`` records the same
key (``cache.stage_key``). Every stage writes its folder atomically, so an interrupted run leaves no corrupt output.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from real2sim.atomic import claim_folder
from real2sim.errors import ConfigError, InputError
from real2sim.executor import ExecutorCfg, run_map
from real2sim.outguard import MARKER, check_output, remove_created
from real2sim.pipeline.cache import RunRecord, hashed_options, stage_key
from real2sim.pipeline.session import Session, load_session
from real2sim.pipeline.summary import (
    SUMMARY_TYPES,
    CalibrationSummary,
    PackageSummary,
    SceneSummary,
    StageSummary,
)
from real2sim.scene import Scene, load_scene, sanitize_name

STAGES = ("recon", "export", "calibrate")
PROCESS_ENTRIES = ("scene", "package", "calibration", "run.json")
"""What ``process`` writes into its output folder."""
S = TypeVar("S", SceneSummary, PackageSummary, CalibrationSummary)


@dataclass(frozen=True)
class ProcessCfg:
    """What ``process`` runs and where it writes."""

    session_dir: Path
    """The capture session folder (DESIGN §5)."""
    out_dir: Path
    """Output folder (scene/, package/, calibration/, run.json)."""
    overwrite: bool = False
    """Replace the output folder even when it holds files real2sim did not write (never an input, ~ or /)."""
    stages: tuple[str, ...] = STAGES
    """Stages to run, in order; a stage whose inputs the session lacks is skipped with a note."""
    workers: int = 0
    """Worker processes (0 = one per core): for the sessions of a batch, else for per-object work."""
    force: bool = False
    """Re-run stages even when their inputs and options are unchanged."""
    calibration_max_windows: int | None = None
    """Cap on multiple-shooting windows per calibration (None = all); a faster, coarser fit."""
    calibration_package: bool = False
    """Write the calibrated values into this run's package/ (its MJCF, URDF, USD and README), as calibrate --package."""

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
    summary: StageSummary


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


class _Runner:
    def __init__(self, cfg: ProcessCfg):
        self.cfg = cfg
        self.out = Path(cfg.out_dir).absolute()
        self.record = RunRecord(self.out / "run.json")
        self.runs: list[StageRun] = []

    def run(self, name: str, output: Path, key: str, work: Callable[[], StageSummary]) -> None:
        """Run ``work`` unless ``run.json`` says this stage finished with ``key`` and ``output`` exists."""
        kind = SUMMARY_TYPES[name]
        prev = None if self.cfg.force or not output.exists() else self.record.finished(name, key)
        t0 = time.perf_counter()
        if prev is not None:
            try:
                self.runs.append(StageRun(name, output, time.perf_counter() - t0, True, kind.from_json(prev)))
                return
            except (KeyError, TypeError):
                pass  # a summary from an older real2sim: run the stage again
        summary = work()
        self.runs.append(StageRun(name, output, time.perf_counter() - t0, False, summary))
        self.record.record(name, key, output, summary.to_json())


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
        return _run_stages(cfg, session)
    except BaseException:
        if not existed and set(os.listdir(out)) <= {MARKER}:
            shutil.rmtree(out, ignore_errors=True)
            remove_created(created)
        raise


def _run_stages(cfg: ProcessCfg, session: Session) -> ProcessResult:
    r = _Runner(cfg)
    notes: list[str] = []
    scene_dir = r.out / "scene"
    scene: Scene | None = None
    if "recon" in cfg.stages:
        if session.lidar:
            scene = _recon_lidar(r, session, scene_dir)
        elif session.images is not None:
            scene = _recon_photos(r, session, scene_dir)
        elif session.splats:
            scene = _recon_splat(r, session, scene_dir)
        else:
            notes.append("recon: the session has no scans, photos or splats")
        if session.lidar and session.images is not None and session.colour_scans is not False:
            notes.append("recon: scans used; the photos colour their meshes when the scans carry no colour")
        elif session.lidar and (session.images is not None or session.splats):
            notes.append("recon: scans used; photos/splats of the same scene are not fused yet")
    if "export" in cfg.stages and scene_dir.is_dir():
        _export(r, session, scene, scene_dir, r.out / "package")
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
    parents = {Path(c.out_dir).parent for c in cfgs}
    if len(parents) == 1:  # OUT/<session>/...: OUT is an output folder too
        parent = parents.pop()
        check_output(parent, [c.session_dir for c in cfgs], overwrite=all(c.overwrite for c in cfgs))
        claim_folder(parent, [Path(c.out_dir).name for c in cfgs])
    inner = [dataclasses.replace(c, workers=1) for c in cfgs]
    return run_map(_process_one, inner, executor or ExecutorCfg(), label="sessions")


def _recon(r: _Runner, source: str, scene_dir: Path, key: str, recon: Callable[[], Any]) -> Scene | None:
    """Run one recon stage; the ``Scene`` it built, or None when it was reused (or built none)."""
    built: list[Scene | None] = [None]

    def work() -> SceneSummary:
        built[0] = recon().scene
        if built[0] is None:  # e.g. photos that stopped after SfM: summarise what was written
            built[0] = load_scene(scene_dir)
        return SceneSummary.of(source, built[0])

    r.run("recon", scene_dir, key, work)
    return built[0]


def _recon_lidar(r: _Runner, s: Session, scene_dir: Path) -> Scene | None:
    from real2sim.recon.pointcloud import run_recon_pointcloud
    from real2sim.recon.pointcloud_cfg import PointCloudReconCfg

    cfg = PointCloudReconCfg(
        inputs=tuple(s.lidar),
        out_dir=scene_dir,
        units=s.lidar_units,
        poses=s.lidar_poses,
        object_only=s.lidar_object_only,
        sensor_origin=s.sensor_origin,
        save_point_labels=True,
        overwrite=r.cfg.overwrite,
        density=s.density,
        friction=(s.friction, 0.005, 0.0001),
    )
    inputs = [*s.lidar, *([s.lidar_poses] if s.lidar_poses else [])]
    options = hashed_options(cfg)
    photos = _photos_cfg(s, None) if s.images is not None and s.colour_scans is not False else None
    if photos is not None:  # the photos may colour the scan's meshes
        inputs.append(photos.image_dir)
        options = {"scan": options, "photo_colours": hashed_options(photos)}

    def run() -> Any:
        out = run_recon_pointcloud(cfg)
        if photos is None or (s.colour_scans is None and _coloured(out.scene)):
            return out
        from real2sim.recon.photo_colour import colour_scene_with_photos, rewrite_scene

        scene = colour_scene_with_photos(out.scene, photos)
        if scene is not out.scene:
            rewrite_scene(scene_dir, scene)
        return dataclasses.replace(out, scene=scene)

    return _recon(r, "lidar", scene_dir, stage_key("recon", inputs, options), run)


def _coloured(scene: Scene) -> bool:
    return any(o.mesh.visual.kind == "vertex" for o in scene.objects)


def _recon_photos(r: _Runner, s: Session, scene_dir: Path) -> Scene | None:
    from real2sim.recon.photos import run_recon_photos

    cfg = _photos_cfg(s, scene_dir, r.cfg.overwrite)
    inputs = [cfg.image_dir] + ([s.known_distance] if s.known_distance is not None else [])
    key = stage_key("recon", inputs, hashed_options(cfg))
    return _recon(r, "photos", scene_dir, key, lambda: run_recon_photos(cfg))


def _photos_cfg(s: Session, out_dir: Path | None, overwrite: bool = False) -> Any:
    from real2sim.recon.photos import PhotosReconCfg
    from real2sim.recon.sfm import SfmCfg

    assert s.images is not None
    kw: dict[str, Any] = {"image_dir": s.images, "out_dir": out_dir, "overwrite": overwrite}
    if s.marker is not None:
        kw.update(marker_size=s.marker.size, marker_dictionary=s.marker.dictionary, marker_id=s.marker.id)
    if s.known_distance is not None:
        kw["known_distance"] = s.known_distance
    sfm = {k: v for k, v in (("camera_model", s.camera_model), ("intrinsics", s.intrinsics)) if v is not None}
    return PhotosReconCfg(**kw, scale=s.photos_scale, object_only=s.photos_object_only, sfm=SfmCfg(**sfm))


def _recon_splat(r: _Runner, s: Session, scene_dir: Path) -> Scene | None:
    from real2sim.recon.splat_recon import SplatReconCfg, run_recon_splat

    cfg = SplatReconCfg(
        input=s.splats[0],
        out_dir=scene_dir,
        scale=s.splat_scale,
        overwrite=r.cfg.overwrite,
        object_only=s.splat_object_only,
        density=s.density,
    )
    key = stage_key("recon", [s.splats[0]], hashed_options(cfg))
    return _recon(r, "splat", scene_dir, key, lambda: run_recon_splat(cfg))


def _export(r: _Runner, s: Session, scene: Scene | None, scene_dir: Path, pkg_dir: Path) -> None:
    from real2sim.export.config import ExportCfg
    from real2sim.export.package import export_scene

    name = sanitize_name(s.name)
    cfg = ExportCfg(
        scene_dir=scene_dir, out_dir=pkg_dir, name=name, workers=r.cfg.workers, overwrite=r.cfg.overwrite
    )
    key = stage_key("export", [scene_dir], hashed_options(cfg))

    def work() -> PackageSummary:
        # the recon of this run hands its Scene over; a reused recon's scene is loaded from its folder
        return PackageSummary.of(
            export_scene(scene if scene is not None else load_scene(scene_dir), pkg_dir, cfg)
        )

    r.run("export", pkg_dir, key, work)


def _calibrate(r: _Runner, s: Session, out: Path) -> None:
    from real2sim.calibration.config import CalibrateCfg
    from real2sim.calibration.run import run_calibrate

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
    r.run("calibrate", out, key, lambda: CalibrationSummary.of(run_calibrate(cfg)))
