"""``export_scene``: a ``Scene`` to a validated sim package folder, written atomically and deterministically."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import numpy as np
from real2sim.export.config import ExportCfg
from real2sim.export.objio import obj_text
from real2sim.export.prepare import ObjectJob, PlacedObject, PreparedObject, lowest_z, prepare_object

from real2sim.atomic import dumps_json, output_dir, write_text
from real2sim.errors import ConfigError, StageError
from real2sim.executor import ExecutorCfg, run_map
from real2sim.meshio import mesh_to_ply_bytes
from real2sim.progress import step
from real2sim.provenance import sha256_bytes, tool_versions
from real2sim.results import SimPackage
from real2sim.scene import Scene, load_scene, sanitize_name

log = logging.getLogger(__name__)
SETTLE_RANGE = 0.05
"""Dynamic objects whose lowest point is within this distance [m] above (or any depth below) the support top are
placed exactly on it; higher ones are left where they are (they may rest on another object)."""


def _settle(o: PreparedObject, t: np.ndarray, top: float) -> np.ndarray:
    gap = lowest_z(o, t) - top
    if gap <= SETTLE_RANGE:
        t = t.copy()
        t[2, 3] -= gap
    return t


SETTLE_SECONDS = 1.0
"""Simulated time [s] the dynamic objects are let settle before their poses become the ``home`` keyframe."""
SETTLE_LIMIT = 1e-2
"""An object that moves more than this [m] while settling keeps its scene pose (it was not near rest: falling,
sliding or toppling), so validation reports it instead of the exporter silently relocating it."""


def _presettle(folder: Path, name: str, placed: list[PlacedObject], support, cfg: ExportCfg) -> list[PlacedObject]:
    """Let dynamic objects come to rest on their collision geometry (a scan's pose rocks by a millimetre or so)."""
    import mujoco
    from real2sim.export.mjcf import build_model

    if not any(o.role == "dynamic" for o in placed):
        return placed
    spec = build_model(name, placed, support, cfg)
    spec.modelfiledir = str(folder)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    for _ in range(int(round(SETTLE_SECONDS / model.opt.timestep))):
        mujoco.mj_step(model, data)
    out = []
    for o in placed:
        if o.role != "dynamic":
            out.append(o)
            continue
        b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, o.name)
        t = np.eye(4)
        mat = np.zeros(9)
        mujoco.mju_quat2Mat(mat, data.xquat[b])
        t[:3, :3], t[:3, 3] = mat.reshape(3, 3), data.xpos[b]
        t = np.round(t, 9) + 0.0
        moved = float(np.linalg.norm(t[:3, 3] - o.world_from_object[:3, 3]))
        if moved > SETTLE_LIMIT:
            log.warning("object %r is not at rest in the scene (moved %.1f mm in %.1f s of settling)",
                        o.label, moved * 1e3, SETTLE_SECONDS)
            out.append(o)
        else:
            out.append(replace(o, world_from_object=t))
    return out


def _write_assets(folder: Path, placed: list[PlacedObject]) -> None:
    for o in placed:
        v = o.obj.visual
        colors = v.visual.vertex_colors if v.visual is not None and v.visual.kind == "vertex" else None
        write_text(folder / "assets" / o.visual_file(), obj_text(v.vertices, v.faces, colors, f"{o.name} visual"))
        c = o.obj.collision
        meshes = c.meshes() if c.primitive is None else ([c.primitive.to_mesh()] if o.collision_files() else [])
        for f, m in zip(o.collision_files(), meshes, strict=True):
            write_text(folder / "assets" / f, obj_text(m.vertices, m.faces, None, f"{o.name} collision"))


def export_scene(scene: Scene, out_dir: str | Path, cfg: ExportCfg | None = None) -> SimPackage:
    """Write the package for ``scene`` to ``out_dir``; raises ``StageError`` (and writes nothing) if a check fails."""
    from real2sim.export.mjcf import model_xml, scene_xml
    from real2sim.export.report import readme_md, report_html
    from real2sim.export.urdf import urdf_xml
    from real2sim.export.validate import validate_package

    cfg = cfg or ExportCfg()
    cfg.validate()
    out_dir = Path(out_dir)
    if not scene.objects:
        raise StageError("the scene has no objects to export")
    name = sanitize_name(cfg.name or out_dir.name or "scene")
    taken: set[str] = {"support", "floor", "world", name}
    jobs = [
        ObjectJob(sanitize_name(o.name, taken), o.name, o.mesh, o.density, o.mass, o.rgba, cfg)
        for o in scene.objects
    ]
    prepared = run_map(prepare_object, jobs, ExecutorCfg(workers=cfg.workers), label="preparing objects")
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
    tools = tool_versions() | tool_versions(("pymeshfix", "yourdfpy"))
    options = {"name": name, "formats": ",".join(cfg.formats), **cfg.decomposition_options(),
               "visual_faces": cfg.visual_faces, "timestep": cfg.timestep}
    info = {
        "urdf": "urdf" in cfg.formats,
        "inputs": inputs,
        "tools": tools,
        "options": options,
        "objects": [
            {"name": p.name, "label": p.label, "role": p.role, "mass": p.obj.mass.mass,
             "collision": (p.obj.collision.primitive.kind if p.obj.collision.primitive is not None
                           else f"{len(p.obj.collision.hulls)} hulls"),
             "warnings": list(p.obj.warnings)}
            for p in placed
        ],
    }
    manifest = {
        "name": name,
        "budget": {"max_hulls": cfg.max_hulls, "max_hull_vertices": cfg.max_hull_vertices},
        "objects": [{"name": p.name, "label": p.label, "role": p.role} for p in placed],
    }
    vcfg = replace(cfg.validate_cfg, max_hulls=cfg.max_hulls, max_hull_vertices=cfg.max_hull_vertices)
    with output_dir(out_dir) as tmp:
        _write_assets(tmp, placed)
        write_text(tmp / "export.json", dumps_json(manifest))
        with step("writing MJCF"):
            placed = _presettle(tmp, name, placed, scene.support, cfg)
            write_text(tmp / f"{name}.xml", model_xml(name, placed, scene.support, cfg, tmp))
            write_text(tmp / "scene.xml", scene_xml(name, scene.support, placed))
        if "urdf" in cfg.formats:
            write_text(tmp / f"{name}.urdf", urdf_xml(name, placed, scene.support))
        with step("validating"):
            checks = validate_package(tmp, vcfg)
        renders: list[str] = []
        if cfg.render:
            from real2sim.export.render import render_objects

            with step("rendering"):
                renders = render_objects(tmp, placed)
        write_text(tmp / "README.md", readme_md(name, info, checks))
        write_text(tmp / "report.html", report_html(name, info, checks, renders))
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
