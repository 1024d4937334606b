"""``export_scene``: a ``Scene`` to a validated sim package folder, written atomically and deterministically."""

from __future__ import annotations

import functools
import importlib
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
from real2sim.export.objects.prepare import ObjectJob, PlacedObject, prepare_object
from real2sim.export.objects.visual import write_visual
from real2sim.export.physics.settle import drop_onto_support, presettle
from real2sim.export.physics.values import ObjectPhysics, check_names, resolve_physics
from real2sim.export.writers.formats import WRITERS
from real2sim.export.writers.manifest import MANIFEST_FILE, ManifestObject, PackageManifest, physical_values
from real2sim.export.writers.objio import obj_text
from real2sim.export.writers.usd import without_usd_if_missing
from real2sim.meshio import mesh_to_ply_bytes
from real2sim.outguard import check_output
from real2sim.progress import step
from real2sim.provenance import sha256_bytes, tool_versions
from real2sim.results import SimPackage
from real2sim.scene import Scene, load_scene, sanitize_name

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


def _write_assets(folder: Path, placed: list[PlacedObject]) -> None:
    for o in placed:
        v = o.obj.visual
        write_visual(folder / "assets", o.visual_file(), v, f"{o.name} visual")
        c = o.obj.collision
        meshes = (
            c.meshes() if c.primitive is None else ([c.primitive.to_mesh()] if o.collision_files() else [])
        )
        for f, m in zip(o.collision_files(), meshes, strict=True):
            write_text(folder / "assets" / f, obj_text(m.vertices, m.faces, None, f"{o.name} collision"))
        if (f := o.support_file()) is not None and o.obj.support is not None:
            write_text(folder / "assets" / f, obj_text(*o.obj.support, None, f"{o.name} support contact"))


def _write_engine_files(folder: Path, name: str, placed: list[PlacedObject], support, cfg: ExportCfg) -> None:
    """The files of each format besides the MJCF that ``cfg.formats`` asks for (``writers.formats.WRITERS``), each
    timed."""
    for fmt, module in WRITERS.items():
        if fmt in cfg.formats:
            write = importlib.import_module(f"real2sim.export.writers.{module}").write
            with _timed(f"write {fmt}"):
                write(folder, name, placed, support)


def _manifest(
    name: str,
    placed: list[PlacedObject],
    physics: list[ObjectPhysics],
    inputs: dict[str, str],
    cfg: ExportCfg,
) -> PackageManifest:
    """The package's manifest: its objects (with their physical values and sources), the inputs' hashes, tool
    versions and the options that shaped it."""
    objects = tuple(
        ManifestObject(
            p.name,
            p.label,
            p.role,
            p.obj.mass.mass,
            c.primitive.kind if (c := p.obj.collision).primitive is not None else f"{len(c.hulls)} hulls",
            tuple(p.obj.warnings),
            physical_values(
                p.obj.mass.mass, p.obj.mass.density, p.friction, ph.mass_source, ph.friction_source
            ),
        )
        for p, ph in zip(placed, physics, strict=True)
    )
    options = {
        "name": name,
        "formats": ",".join(cfg.formats),
        **collision_options(cfg),
        "support_hull": cfg.support_hull,
        "visual_faces": cfg.visual_faces,
        "timestep": cfg.timestep,
    }
    return PackageManifest(
        name, cfg.max_hulls, cfg.max_hull_vertices, objects, "urdf" in cfg.formats, inputs, _tools(), options
    )


def export_scene(scene: Scene, out_dir: str | Path, cfg: ExportCfg | None = None) -> SimPackage:
    """Write the package for ``scene`` to ``out_dir``; raises ``StageError`` (and writes nothing) if a check fails."""
    from real2sim.export.checks.compiled import SURFACE_WARNING
    from real2sim.export.report.pages import readme_md, report_html
    from real2sim.export.validate import validate_package
    from real2sim.export.writers.mjcf import compile_scene, model_xml, scene_xml

    cfg = cfg or ExportCfg()
    cfg.validate()
    cfg = without_usd_if_missing(cfg)  # the default formats include usd; usd-core is an extra
    out_dir = Path(out_dir)
    inputs = [cfg.scene_dir]
    check_output(out_dir, inputs, overwrite=cfg.overwrite)
    if not scene.objects:
        raise StageError("the scene has no objects to export")
    name = sanitize_name(cfg.name or out_dir.name or "scene")
    if name.lower() == "scene":  # scene.xml includes <name>.xml: the model needs another name
        name = "scene_model"
    taken: set[str] = {"support", "floor", "world", name}
    executor = ExecutorCfg(workers=cfg.workers)
    threads = coacd_threads(executor.pool_size(len(scene.objects)))
    bodies = [sanitize_name(o.name, taken) for o in scene.objects]
    given = cfg.given()
    check_names(given, scene.objects, bodies)
    physics = [resolve_physics(o, b, given) for o, b in zip(scene.objects, bodies, strict=True)]
    jobs = [
        ObjectJob(b, o.name, o.mesh, ph.density, ph.mass, o.rgba, cfg, threads)
        for o, b, ph in zip(scene.objects, bodies, physics, strict=True)
    ]
    with _timed("objects"):
        prepared = run_map(prepare_object, jobs, executor, label="preparing objects")
    for p in prepared:
        for stage, secs in p.seconds:
            log.info("timing %s %.4f", f"object {p.name} {stage}", secs)
    top = scene.support.top_height()
    placed = []
    for o, p, ph in zip(scene.objects, prepared, physics, strict=True):
        t = np.asarray(o.world_from_object, dtype=np.float64)
        if o.role == "dynamic":
            t = drop_onto_support(p, t, top)
        placed.append(PlacedObject(p, o.name, o.role, ph.friction, t))
    for p in prepared:
        for w in p.warnings:
            log.warning(w)
    inputs = dict(scene.provenance.inputs)
    for j in jobs:
        inputs[f"mesh of {j.label}"] = sha256_bytes(mesh_to_ply_bytes(j.mesh))
    manifest = _manifest(name, placed, physics, inputs, cfg)
    vcfg = replace(
        cfg.validate_cfg, max_hulls=cfg.max_hulls, max_hull_vertices=cfg.max_hull_vertices, strict=cfg.strict
    )
    with output_dir(out_dir, overwrite=cfg.overwrite, inputs=inputs) as tmp:
        with _timed("write assets"):
            _write_assets(tmp, placed)
            write_text(tmp / MANIFEST_FILE, manifest.to_json())
        with step("writing MJCF"):
            with _timed("settle"):
                placed = presettle(tmp, name, placed, scene.support, cfg)
            with _timed("write models"):
                write_text(tmp / f"{name}.xml", model_xml(name, placed, scene.support, cfg, tmp))
                write_text(tmp / "scene.xml", scene_xml(name, scene.support, placed))
                model = compile_scene(tmp)
            _write_engine_files(tmp, name, placed, scene.support, cfg)  # URDFs, USD
        with step("validating"), _timed("validate"):
            checks = validate_package(tmp, vcfg, manifest, model)
        renders: list[str] = []
        if cfg.render:
            from real2sim.export.report.render import render_package

            with step("rendering"), _timed("render"):
                renders = render_package(tmp, placed, scene.support)
        write_text(tmp / "README.md", readme_md(manifest, checks))
        write_text(tmp / "report.html", report_html(manifest, checks, renders))
        for c in checks:
            if c.detail.endswith(SURFACE_WARNING):
                log.warning("%s: %s", c.name, c.detail)
        failed = [c for c in checks if c.failed]
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
    check_output(cfg.out_dir, [cfg.scene_dir], overwrite=cfg.overwrite)
    scene = load_scene(cfg.scene_dir)
    name = cfg.name or sanitize_name(Path(cfg.scene_dir).resolve().name)
    return export_scene(scene, cfg.out_dir, replace(cfg, name=name))
