"""The twin folder: ``scene.xml`` (one MJCF, loadable from anywhere), ``assets/``, ``twin.json`` (what the twin holds and
how it was checked) and ``README.md``; and ``load_twin``, which replay uses to read it back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from real2sim.atomic import dumps_json, write_text
from real2sim.bounded import load_json
from real2sim.errors import InputError
from real2sim.provenance import sha256_file, tool_versions
from real2sim.twin.assets import relative_paths
from real2sim.twin.build import Twin
from real2sim.twin.compose import RobotInfo, compile_or_refuse
from real2sim.twin.config import TwinCfg

TWIN_VERSION = 1


def set_home_key(spec, model, twin: Twin) -> None:
    """``home`` first among the keyframes (the settled state, servos holding the arm); the robot's own keyframes
    (prefixed, as attach merged them) after it."""
    import mujoco

    qpos, ctrl = [float(x) for x in twin.home.qpos], [float(x) for x in twin.home.ctrl]
    keys = list(spec.keys)
    if keys and keys[0].name == "home":  # the package's own home comes first: set it (deleting keys is slow)
        keys[0].qpos, keys[0].ctrl = qpos, ctrl
        keys[0].qvel, keys[0].act = [0.0] * model.nv, [0.0] * model.na
        return
    others = []
    for i in range(model.nkey):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_KEY, i) or ""
        if name != "home":
            others.append((name, model.key_qpos[i].copy(), model.key_ctrl[i].copy()))
    for k in keys:
        spec.delete(k)
    spec.add_key(name="home", qpos=qpos, ctrl=ctrl)
    for name, q, c in others:
        spec.add_key(name=name, qpos=[float(x) for x in q], ctrl=[float(x) for x in c])


def manifest(twin: Twin, cfg: TwinCfg, usd: dict) -> dict:
    rel = [round(float(x), 9) + 0.0 for x in twin.home_qpos_robot]
    home = twin.home.to_json(cfg.rest_limit)
    home["robot_qpos"] = rel
    return {
        "version": TWIN_VERSION,
        "scene_xml": "scene.xml",
        "robot": {
            **twin.robot.to_json(),
            "model": str(Path(cfg.robot).resolve()),
            "sha256": sha256_file(cfg.robot),
        },
        "package": {
            "name": twin.package,
            "path": str(Path(cfg.scene).resolve()),
            "sha256_mjcf": sha256_file(Path(cfg.scene) / f"{twin.package}.xml"),
            "objects": sorted(_objects(twin)),
            "cut": [{"geom": c.geom, "body": c.body, "inside": c.inside} for c in twin.cuts],
            "removed": twin.removed,
        },
        "calibration": None
        if cfg.calibration is None
        else {
            "path": str(Path(cfg.calibration).resolve()),
            "applied": twin.calibration,
            "randomization": {k: [v[0], v[1]] for k, v in twin.ranges.items()},
        },
        "base": twin.base.to_json(),
        "home": home,
        "timestep": float(twin.model.opt.timestep),
        "cameras": twin.cameras,
        "usd": usd,
        "notes": twin.notes,
        "tools": tool_versions(("real2sim", "mujoco", "numpy", "open3d")),
    }


def _objects(twin: Twin) -> list[str]:
    from real2sim.twin.home import ids

    return list(ids(twin.model, twin.robot).objects)


def write_twin(twin: Twin, cfg: TwinCfg, dest: Path, usd: dict) -> dict:
    """Write the twin into ``dest`` (its assets are there already) and check that the written ``scene.xml`` compiles
    to the same model; returns the manifest written as ``twin.json``."""
    spec = twin.spec
    set_home_key(spec, twin.model, twin)
    spec.modelname = f"{twin.package} + {twin.robot.name} twin"
    xml = relative_paths(spec.to_xml(), dest / "assets")
    write_text(dest / "scene.xml", xml)
    check = compile_or_refuse(_spec_of(dest / "scene.xml"), dest / "scene.xml", "the written twin")
    if (check.nbody, check.njnt, check.nu, check.ngeom) != (
        twin.model.nbody,
        twin.model.njnt,
        twin.model.nu,
        twin.model.ngeom,
    ):
        raise InputError(dest / "scene.xml", "the written twin does not compile to the composed model")
    doc = manifest(twin, cfg, usd)
    write_text(dest / "twin.json", dumps_json(doc))
    write_text(dest / "README.md", readme(doc))
    return doc


def _spec_of(path: Path):
    import mujoco

    return mujoco.MjSpec.from_file(str(path))


def readme(doc: dict) -> str:
    r, p, b, h = doc["robot"], doc["package"], doc["base"], doc["home"]
    cal = doc["calibration"]
    lines = [
        f"# Digital twin: {r['name']} in {p['name']}",
        "",
        "Made by `real2sim twin`. One MJCF, `scene.xml`, holds the scene package's objects (their fitted or weighed",
        f"physics as the package has them) and the robot attached unmodified under the prefix `{r['prefix']}`",
        "(MjSpec attach: its classes, assets and keyframes merged).",
        "",
        "## Inputs",
        "",
        f"- robot: `{r['model']}` (sha256 {r['sha256'][:16]}...)",
        f"- scene package: `{p['path']}` (`{p['name']}.xml` sha256 {p['sha256_mjcf'][:16]}...)",
        f"- calibration: `{cal['path']}`, {len(cal['applied'])} values applied"
        if cal
        else "- calibration: none",
        "",
        "## Base",
        "",
        f"Route `{b['route']}` ({b['detail']}): position {b['pos']} m, orientation (wxyz) {b['quat_wxyz']};",
        f"uncertainty {b['sigma_position_m']} m, {b['sigma_rotation_deg']} deg.",
        "",
        "## Home keyframe",
        "",
        f"`home` (keyframe 0): the arm holding its pose, every object resting; over {h['seconds']} s from it the",
        f"objects move at most {h['max_object_motion_m'] * 1e3:.3f} mm (limit {h['limit_m'] * 1e3:g} mm).",
        f"Cut out of the scene (inside the robot at home): {', '.join(c['geom'] for c in p['cut']) or 'nothing'}.",
        "",
        "## Load it",
        "",
        "```python",
        "import mujoco",
        'model = mujoco.MjModel.from_xml_path("scene.xml")',
        "data = mujoco.MjData(model)",
        'mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)',
        "```",
        "",
        f"USD: {doc['usd'].get('file') or 'not written: ' + str(doc['usd'].get('reason'))}.",
        "",
    ]
    return "\n".join(lines)


@dataclass(frozen=True)
class LoadedTwin:
    """A twin folder read back: its compiled model, the robot in it and ``twin.json``."""

    path: Path
    model: Any
    robot: RobotInfo
    manifest: dict

    @property
    def ranges(self) -> dict[str, tuple[float, float]]:
        cal = self.manifest.get("calibration") or {}
        return {k: (float(v[0]), float(v[1])) for k, v in (cal.get("randomization") or {}).items()}


def load_twin(path: Path) -> LoadedTwin:
    doc = load_json(Path(path) / "twin.json", "twin.json")
    try:
        robot = RobotInfo.from_json(doc["robot"])
        xml = Path(path) / doc["scene_xml"]
    except (KeyError, TypeError):
        raise InputError(Path(path) / "twin.json", "not a twin.json of real2sim twin") from None
    model = compile_or_refuse(_spec_of(xml), xml, "the twin")
    return LoadedTwin(Path(path), model, robot, doc)
