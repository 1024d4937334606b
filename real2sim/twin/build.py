"""``build_twin``: robot + scene package (+ calibration, + base route) → the composed, checked twin in memory."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from real2sim.errors import InputError, StageError
from real2sim.transforms import times_matrix
from real2sim.twin.assets import adopt_assets
from real2sim.twin.base import BaseEstimate, given_pose, icp_pose, marker_pose
from real2sim.twin.cameras import add_cameras
from real2sim.twin.compose import (
    RobotInfo,
    apply_calibration,
    attach_robot,
    calibrated_values,
    check_attached,
    check_prefix,
    compile_or_refuse,
    load_spec,
    robot_info,
)
from real2sim.twin.config import TwinCfg
from real2sim.twin.geometry import body_geoms, geom_points, support_top
from real2sim.twin.home import (
    MAX_PENETRATION,
    Cut,
    HomeCheck,
    apply_cuts,
    find_cuts,
    home_pose,
    ids,
    penetrations,
    set_robot,
    settle_home,
)

log = logging.getLogger(__name__)

FLOAT_WARN = 0.01
"""A full base pose whose lowest point is more than this [m] above the support gets a note (the base floats)."""


@dataclass
class Twin:
    """The composed twin: its spec and model, the robot in it, and what was found on the way."""

    spec: Any
    model: Any
    robot: RobotInfo
    package: str
    package_dir: Path
    base: BaseEstimate
    home: HomeCheck
    home_qpos_robot: np.ndarray
    cuts: list[Cut]
    removed: list[str]
    cameras: list[str]
    calibration: dict = field(default_factory=dict)
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def package_name(pkg: Path) -> str:
    from real2sim.bounded import load_json

    try:
        name = load_json(pkg / "export.json", "package manifest")["name"]
        if isinstance(name, str) and (pkg / "scene.xml").is_file():
            return name
    except (InputError, KeyError, TypeError):
        pass
    raise InputError(pkg, "not a scene package (needs export.json and scene.xml; see real2sim export)")


def _robot(cfg: TwinCfg, dest: Path | None):
    spec = load_spec(cfg.robot, "robot model")
    files = adopt_assets(
        spec, cfg.robot, dest / "assets" if dest else None, cfg.prefix.strip("/_-:.") or "robot"
    )
    model = compile_or_refuse(spec, cfg.robot, "robot model")
    bad = [j for j in range(model.njnt) if int(model.jnt_type[j]) not in (2, 3)]
    if bad:
        raise InputError(
            cfg.robot,
            "a twin's robot has a fixed base (hinge and slide joints only); this one has a free or ball joint",
        )
    return spec, model, files


def _base(cfg: TwinCfg, pkg_model, robot_model, q_home) -> BaseEstimate:
    """The base estimate of the chosen route (its height still to be set when ``stand_on_support``)."""
    import mujoco

    sup = pkg_model.geom("support") if _has_geom(pkg_model, "support") else None
    centre = (float(sup.pos[0]), float(sup.pos[1])) if sup is not None else (0.0, 0.0)
    if cfg.route == "marker":
        assert cfg.marker_images is not None and cfg.marker_cameras is not None
        return marker_pose(cfg.marker_images, cfg.marker_cameras, cfg.marker_size, cfg.marker_dictionary,
                           cfg.marker_id, cfg.base_from_marker)  # fmt: skip
    coarse = given_pose(cfg.base_pose, centre)
    if cfg.route == "pose":
        return coarse
    assert cfg.icp_scan is not None
    from real2sim.twin.scan import robot_surface, scan_points

    t = coarse.world_from_base.copy()
    if coarse.stand_on_support:
        t[2, 3] = _stand_height(pkg_model, robot_model, q_home, t)
    rd = mujoco.MjData(robot_model)
    return icp_pose(robot_surface(robot_model, rd, q_home), scan_points(cfg.icp_scan, cfg.icp_scene), t,
                    cfg.icp_max_distance)  # fmt: skip


def _has_geom(model, name: str) -> bool:
    import mujoco

    return mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name) >= 0


def _robot_lowest(robot_model, q_home, world_from_base: np.ndarray) -> float:
    """Lowest z [m] of the robot's root body's geoms (all its geoms when the root has none), relative to the base
    origin, with the base turned as ``world_from_base`` turns it."""
    import mujoco

    d = mujoco.MjData(robot_model)
    d.qpos[:] = q_home
    mujoco.mj_forward(robot_model, d)
    root = int(np.nonzero(robot_model.body_parentid == 0)[0][1])
    geoms = body_geoms(robot_model, {root}) or body_geoms(robot_model, set(range(1, robot_model.nbody)))
    if not geoms:
        return 0.0
    pts = np.concatenate([geom_points(robot_model, d, g) for g in geoms])
    return float(times_matrix(pts, world_from_base[2, :3]).min())  # the points' z after the base's rotation


def _stand_height(pkg_model, robot_model, q_home, t: np.ndarray) -> float:
    import mujoco

    pd = mujoco.MjData(pkg_model)
    mujoco.mj_forward(pkg_model, pd)
    top = support_top(pkg_model, pd, float(t[0, 3]), float(t[1, 3]))
    if top is None:
        raise InputError(
            f"base pose {t[0, 3]:g},{t[1, 3]:g}", "no support below that point (give x,y,z,qw,qx,qy,qz)"
        )
    return top[0] - _robot_lowest(robot_model, q_home, t)


def _check_not_inside(
    cfg: TwinCfg, pkg_model, robot_model, q_home, base: BaseEstimate, notes: list[str]
) -> None:
    """A base whose lowest point lies below the support's top under it is inside the table: refused."""
    import mujoco

    t = base.world_from_base
    pd = mujoco.MjData(pkg_model)
    mujoco.mj_forward(pkg_model, pd)
    top = support_top(pkg_model, pd, float(t[0, 3]), float(t[1, 3]))
    if top is None:
        notes.append("no support below the base: it stands in the air where the pose puts it")
        return
    low = float(t[2, 3]) + _robot_lowest(robot_model, q_home, t)
    if low < top[0] - MAX_PENETRATION:
        raise InputError(
            "base pose " + ",".join(f"{v:g}" for v in cfg.base_pose) if cfg.base_pose else cfg.robot,
            f"puts the robot {(top[0] - low) * 1e3:.1f} mm inside the support {top[1]!r} (its top is at z = "
            f"{top[0]:.4f} m, the robot's lowest point at {low:.4f} m); give x,y to stand it on the support",
        )
    if low > top[0] + FLOAT_WARN:
        notes.append(f"the base's lowest point is {(low - top[0]) * 1e3:.0f} mm above the support {top[1]!r}")


def build_twin(cfg: TwinCfg, dest: Path | None) -> Twin:
    """Compose and check the twin; with ``dest``, its asset files are copied into ``dest/assets``."""
    import mujoco

    notes: list[str] = []
    name = package_name(cfg.scene)
    robot_spec, robot_model, _ = _robot(cfg, dest)
    info = robot_info(robot_model, robot_spec.modelname or cfg.robot.stem, cfg.prefix)
    q_home = home_pose(robot_spec, robot_model, cfg.home, cfg.robot)
    applied: dict[str, float] = {}
    ranges: dict[str, tuple[float, float]] = {}
    if cfg.calibration is not None:
        applied, ranges, warns = calibrated_values(cfg.calibration)
        apply_calibration(robot_spec, robot_model, applied, cfg.calibration / "result.json")
        notes += [f"calibration: {w}" for w in warns]
        robot_model = compile_or_refuse(robot_spec, cfg.robot, "calibrated robot model")
    scene_spec = load_spec(cfg.scene / "scene.xml", "scene package")
    adopt_assets(scene_spec, cfg.scene / "scene.xml", dest / "assets" if dest else None, "")
    pkg_model = compile_or_refuse(scene_spec, cfg.scene / "scene.xml", "scene package")
    check_prefix(scene_spec, cfg.prefix, cfg.scene)
    scene_bodies = [b.name for b in scene_spec.bodies if b.name and b.name != "world"]
    base = _base(cfg, pkg_model, robot_model, q_home)
    if base.stand_on_support:
        t = base.world_from_base.copy()
        t[2, 3] = _stand_height(pkg_model, robot_model, q_home, t)
        base = BaseEstimate(
            t, base.route, base.sigma_position, base.sigma_rotation_deg, base.detail, base.figures
        )
    _check_not_inside(cfg, pkg_model, robot_model, q_home, base, notes)
    attach_robot(scene_spec, robot_spec, cfg.prefix, base.world_from_base, cfg.robot)
    cameras = add_cameras(
        scene_spec, cfg.cameras or cfg.marker_cameras, cfg.prefix + info.root, base.world_from_base[:3, 3]
    )
    model = compile_or_refuse(scene_spec, cfg.robot, "the twin (robot attached to the scene)")
    check_attached(model, info, scene_bodies, cfg.robot)
    ix = ids(model, info)
    data = mujoco.MjData(model)
    mujoco.mj_resetData(model, data)
    set_robot(model, data, ix, q_home)
    mujoco.mj_forward(model, data)
    cuts = find_cuts(model, data, ix, cfg.cut_margin)
    removed: list[str] = []
    if cuts:
        removed = apply_cuts(scene_spec, model, cuts)
        model = compile_or_refuse(scene_spec, cfg.robot, "the twin after cutting the robot out of the scene")
        ix = ids(model, info)
        data = mujoco.MjData(model)
        set_robot(model, data, ix, q_home)
    deep = penetrations(model, data, ix, MAX_PENETRATION)
    if deep:
        raise InputError(
            cfg.robot,
            f"at home the robot penetrates the scene: {'; '.join(deep[:4])}; move the base or the home pose",
        )
    home = settle_home(model, data, ix, q_home, cfg.rest_seconds)
    if home.warnings:
        raise StageError(f"MuJoCo warned while the twin rested at home: {home.warnings}")
    return Twin(
        scene_spec,
        model,
        info,
        name,
        Path(cfg.scene),
        base,
        home,
        q_home,
        cuts,
        removed,
        cameras,
        applied,
        ranges,
        notes,
    )
