"""``export_scene``: a ``Scene`` to a validated sim package folder, written atomically and deterministically."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np

from real2sim.atomic import output_dir, write_text
from real2sim.errors import ConfigError, StageError
from real2sim.executor import ExecutorCfg, run_map
from real2sim.export.collision.coacd import coacd_threads
from real2sim.export.config import ExportCfg, collision_options
from real2sim.export.manifest import MANIFEST_FILE, ManifestObject, PackageManifest
from real2sim.export.objio import obj_text
from real2sim.export.prepare import ObjectJob, PlacedObject, PreparedObject, lowest_z, prepare_object
from real2sim.export.usd import without_usd_if_missing
from real2sim.meshio import mesh_to_ply_bytes
from real2sim.progress import step
from real2sim.provenance import sha256_bytes, tool_versions
from real2sim.results import SimPackage
from real2sim.scene import Scene, load_scene, sanitize_name
from real2sim.transforms import pose_matrix

log = logging.getLogger(__name__)


@contextmanager
def _timed(stage: str) -> Iterator[None]:
    """Log the wall time of ``stage`` at INFO (``"timing %s %.4f"``: the benchmark's profile; never in files)."""
    t0 = time.perf_counter()
    yield
    log.info("timing %s %.4f", stage, time.perf_counter() - t0)


@functools.cache
def _tools() -> dict[str, str]:
    """Versions of the tools that shaped the package (looked up once per process)."""
    return tool_versions() | tool_versions(("pymeshfix", "yourdfpy"))


SETTLE_RANGE = 0.05
"""Dynamic objects whose lowest point is within this distance [m] above (or any depth below) the support top are
placed exactly on it; higher ones are left where they are (they may rest on another object)."""


def _settle(o: PreparedObject, t: np.ndarray, top: float) -> np.ndarray:
    gap = lowest_z(o, t) - top
    if gap <= SETTLE_RANGE:
        t = t.copy()
        t[2, 3] -= gap
    return t


SETTLE_MAX_SECONDS = 3.0
"""Longest simulated time [s] the dynamic objects are given to come to rest before their poses become ``home``."""
SETTLE_CHUNK = 0.05
"""Rest is tested every this many simulated seconds [s]."""
REST_SPEED = 2e-4
"""An object is at rest when the fastest point of its bounding sphere moves slower than this [m/s] ..."""
REST_CHUNKS = 3
"""... over this many consecutive chunks (a snapshot mid-bounce or mid-rock would start ``home`` penetrating or
moving, which is what made the rest test flaky on reconstructed meshes)."""
SETTLE_LIMIT = 1e-2
"""An object that moves more than this [m] while settling keeps its scene pose (it was not near rest: falling,
sliding or toppling), so validation reports it instead of the exporter relocating it. One that moved less but is
still moving at ``SETTLE_MAX_SECONDS`` takes its settled pose (with a warning) and validation judges it."""


def _body_speed(data, model, body: int, radius: float) -> float:
    """Fastest speed [m/s] of a point within ``radius`` of the body origin (linear + angular x radius)."""
    import mujoco

    v = np.zeros(6)
    mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, body, v, 0)
    return float(np.linalg.norm(v[3:]) + np.linalg.norm(v[:3]) * radius)


def _presettle(
    folder: Path, name: str, placed: list[PlacedObject], support, cfg: ExportCfg
) -> list[PlacedObject]:
    """Let dynamic objects come to rest on their collision geometry (a scan's pose rocks by a millimetre or so).

    Steps until every dynamic object has been at rest (``REST_SPEED``) for ``REST_CHUNKS`` chunks in a row, at most
    ``SETTLE_MAX_SECONDS``; objects that moved more than ``SETTLE_LIMIT`` or never came to rest keep their pose.
    """
    import mujoco

    from real2sim.export.mjcf import build_model

    dyn = [o for o in placed if o.role == "dynamic"]
    if not dyn:
        return placed
    spec = build_model(name, placed, support, cfg)
    spec.modelfiledir = str(folder)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    bodies = {o.name: mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, o.name) for o in dyn}
    radius = {o.name: 0.5 * float(np.linalg.norm(o.obj.watertight.extents)) for o in dyn}
    per_chunk = max(1, int(round(SETTLE_CHUNK / model.opt.timestep)))
    calm = dict.fromkeys(bodies, 0)
    t = 0.0
    while t < SETTLE_MAX_SECONDS and min(calm.values()) < REST_CHUNKS:
        for _ in range(per_chunk):
            mujoco.mj_step(model, data)
        t += per_chunk * model.opt.timestep
        for n, b in bodies.items():
            calm[n] = calm[n] + 1 if _body_speed(data, model, b, radius[n]) < REST_SPEED else 0
    out = []
    for o in placed:
        if o.role != "dynamic":
            out.append(o)
            continue
        b = bodies[o.name]
        pose = np.round(pose_matrix(data.xpos[b], data.xquat[b]), 9) + 0.0
        moved = float(np.linalg.norm(pose[:3, 3] - o.world_from_object[:3, 3]))
        if moved > SETTLE_LIMIT:
            log.warning(
                "object %r is not at rest in the scene (moved %.1f mm in %.2f s of settling)",
                o.label,
                moved * 1e3,
                t,
            )
            out.append(o)
            continue
        if (
            calm[o.name] < REST_CHUNKS
        ):  # a slow creep or contact jitter: the settled pose is still the better start
            log.warning(
                "object %r still moves after %.2f s of settling (moved %.1f mm); validation will judge it",
                o.label,
                t,
                moved * 1e3,
            )
        out.append(replace(o, world_from_object=pose))
    return out


def _write_assets(folder: Path, placed: list[PlacedObject]) -> None:
    for o in placed:
        v = o.obj.visual
        colors = v.visual.vertex_colors if v.visual is not None and v.visual.kind == "vertex" else None
        write_text(
            folder / "assets" / o.visual_file(), obj_text(v.vertices, v.faces, colors, f"{o.name} visual")
        )
        c = o.obj.collision
        meshes = (
            c.meshes() if c.primitive is None else ([c.primitive.to_mesh()] if o.collision_files() else [])
        )
        for f, m in zip(o.collision_files(), meshes, strict=True):
            write_text(folder / "assets" / f, obj_text(m.vertices, m.faces, None, f"{o.name} collision"))


def _write_engine_files(folder: Path, name: str, placed: list[PlacedObject], support, cfg: ExportCfg) -> None:
    """``urdf/<object>.urdf`` (with ``urdf``) and ``<name>.usd`` (with ``usd``), each timed."""
    if "urdf" in cfg.formats:
        from real2sim.export.urdf_objects import write_object_urdfs

        with _timed("write object urdfs"):
            write_object_urdfs(folder, placed)
    if "usd" in cfg.formats:
        from real2sim.export.usd import write_usd

        with _timed("write usd"):
            write_usd(folder, name, placed, support)


def _manifest(
    name: str, placed: list[PlacedObject], inputs: dict[str, str], cfg: ExportCfg
) -> PackageManifest:
    """The package's manifest: its objects, the inputs' hashes, tool versions and the options that shaped it."""
    objects = tuple(
        ManifestObject(
            p.name,
            p.label,
            p.role,
            p.obj.mass.mass,
            c.primitive.kind if (c := p.obj.collision).primitive is not None else f"{len(c.hulls)} hulls",
            tuple(p.obj.warnings),
        )
        for p in placed
    )
    options = {
        "name": name,
        "formats": ",".join(cfg.formats),
        **collision_options(cfg),
        "visual_faces": cfg.visual_faces,
        "timestep": cfg.timestep,
    }
    return PackageManifest(
        name, cfg.max_hulls, cfg.max_hull_vertices, objects, "urdf" in cfg.formats, inputs, _tools(), options
    )


def export_scene(scene: Scene, out_dir: str | Path, cfg: ExportCfg | None = None) -> SimPackage:
    """Write the package for ``scene`` to ``out_dir``; raises ``StageError`` (and writes nothing) if a check fails."""
    from real2sim.export.mjcf import compile_scene, model_xml, scene_xml
    from real2sim.export.report import readme_md, report_html
    from real2sim.export.urdf import urdf_xml
    from real2sim.export.validate import validate_package

    cfg = cfg or ExportCfg()
    cfg.validate()
    cfg = without_usd_if_missing(cfg)  # the default formats include usd; usd-core is an extra
    out_dir = Path(out_dir)
    if not scene.objects:
        raise StageError("the scene has no objects to export")
    name = sanitize_name(cfg.name or out_dir.name or "scene")
    taken: set[str] = {"support", "floor", "world", name}
    executor = ExecutorCfg(workers=cfg.workers)
    threads = coacd_threads(executor.pool_size(len(scene.objects)))
    jobs = [
        ObjectJob(sanitize_name(o.name, taken), o.name, o.mesh, o.density, o.mass, o.rgba, cfg, threads)
        for o in scene.objects
    ]
    with _timed("objects"):
        prepared = run_map(prepare_object, jobs, executor, label="preparing objects")
    for p in prepared:
        for stage, secs in p.seconds:
            log.info("timing %s %.4f", f"object {p.name} {stage}", secs)
    top = scene.support.top_height()
    placed = []
    for o, p in zip(scene.objects, prepared, strict=True):
        t = np.asarray(o.world_from_object, dtype=np.float64)
        if o.role == "dynamic":
            t = _settle(p, t, top)
        placed.append(PlacedObject(p, o.name, o.role, tuple(float(x) for x in o.friction), t))
    for p in prepared:
        for w in p.warnings:
            log.warning(w)
    inputs = dict(scene.provenance.inputs)
    for j in jobs:
        inputs[f"mesh of {j.label}"] = sha256_bytes(mesh_to_ply_bytes(j.mesh))
    manifest = _manifest(name, placed, inputs, cfg)
    vcfg = replace(cfg.validate_cfg, max_hulls=cfg.max_hulls, max_hull_vertices=cfg.max_hull_vertices)
    with output_dir(out_dir) as tmp:
        with _timed("write assets"):
            _write_assets(tmp, placed)
            write_text(tmp / MANIFEST_FILE, manifest.to_json())
        with step("writing MJCF"):
            with _timed("settle"):
                placed = _presettle(tmp, name, placed, scene.support, cfg)
            with _timed("write models"):
                write_text(tmp / f"{name}.xml", model_xml(name, placed, scene.support, cfg, tmp))
                write_text(tmp / "scene.xml", scene_xml(name, scene.support, placed))
                model = compile_scene(tmp)
                if "urdf" in cfg.formats:
                    write_text(tmp / f"{name}.urdf", urdf_xml(name, placed, scene.support))
            _write_engine_files(tmp, name, placed, scene.support, cfg)  # per-object URDFs, USD
        with step("validating"), _timed("validate"):
            checks = validate_package(tmp, vcfg, manifest, model)
        renders: list[str] = []
        if cfg.render:
            from real2sim.export.render import render_objects

            with step("rendering"), _timed("render"):
                renders = render_objects(tmp, placed)
        write_text(tmp / "README.md", readme_md(manifest, checks))
        write_text(tmp / "report.html", report_html(manifest, checks, renders))
        failed = [c for c in checks if not c.passed]
        if failed:
            raise StageError(
                f"package for {out_dir} failed {len(failed)} check(s), nothing written: "
                + "; ".join(f"{c.name}: {c.detail}" for c in failed)
            )
    return SimPackage(
        path=out_dir,
        name=name,
        mjcf=out_dir / f"{name}.xml",
        scene_xml=out_dir / "scene.xml",
        urdf=out_dir / f"{name}.urdf" if "urdf" in cfg.formats else None,
        checks=checks,
    )


def run_export(cfg: ExportCfg) -> SimPackage:
    """Read ``cfg.scene_dir`` and export it to ``cfg.out_dir``."""
    if cfg.scene_dir is None or cfg.out_dir is None:
        raise ConfigError("export needs a scene folder and an output folder (-o)")
    cfg.validate()
    scene = load_scene(cfg.scene_dir)
    name = cfg.name or sanitize_name(Path(cfg.scene_dir).resolve().name)
    return export_scene(scene, cfg.out_dir, replace(cfg, name=name))
