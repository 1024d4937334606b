"""The robot's MJCF and a scene package composed with ``MjSpec.attach``: the robot unmodified under a name prefix
(its classes, assets and keyframes merged with it), the calibrated values written on top, placed at the base's
pose. Names never clash silently: the prefix must be new to the scene, and MuJoCo refuses a repeated name."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from real2sim.bounded import load_json
from real2sim.errors import InputError
from real2sim.twin.geometry import mat_to_quat as matrix_to_quat

if TYPE_CHECKING:
    from real2sim.calibration.params.resolved import Resolved


@dataclass(frozen=True)
class RobotInfo:
    """The robot inside the twin: its prefix and its joints, actuators and bodies by their own (unprefixed) names."""

    name: str
    prefix: str
    root: str
    joints: tuple[str, ...]
    actuators: tuple[str, ...]
    actuator_joints: tuple[str, ...]
    """The joint each actuator drives ('' for one that drives none)."""
    position_servo: tuple[bool, ...]
    """Whether each actuator is a position servo (its ctrl is a goal position of its joint)."""
    bodies: tuple[str, ...]

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "prefix": self.prefix,
            "root_body": self.root,
            "joints": list(self.joints),
            "actuators": [
                {"name": a, "joint": j, "position_servo": p}
                for a, j, p in zip(self.actuators, self.actuator_joints, self.position_servo, strict=True)
            ],
            "bodies": list(self.bodies),
        }

    @classmethod
    def from_json(cls, d: dict) -> RobotInfo:
        acts = d["actuators"]
        return cls(
            d["name"],
            d["prefix"],
            d["root_body"],
            tuple(d["joints"]),
            tuple(a["name"] for a in acts),
            tuple(a["joint"] for a in acts),
            tuple(bool(a["position_servo"]) for a in acts),
            tuple(d["bodies"]),
        )


def compile_or_refuse(spec, path: Path, what: str):
    """``spec.compile()``; MuJoCo's error becomes one line naming the file."""
    try:
        return spec.compile()
    except ValueError as exc:
        msg = " ".join(str(exc).split()).removeprefix("Error: ")
        raise InputError(path, f"{what} does not compile in MuJoCo: {msg}") from None


def load_spec(path: Path, what: str):
    import mujoco

    try:
        return mujoco.MjSpec.from_file(str(path))
    except ValueError as exc:
        msg = " ".join(str(exc).split()).removeprefix("Error: ")
        raise InputError(path, f"{what} is not a MuJoCo model: {msg}") from None


def robot_info(model, name: str, prefix: str) -> RobotInfo:
    """What the robot alone (compiled, unprefixed) holds, for ``twin.json`` and replay."""
    import mujoco

    def nm(obj, i):
        return mujoco.mj_id2name(model, obj, i) or ""

    joints = tuple(nm(mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(model.njnt))
    if any(not j for j in joints):
        raise InputError(name, "every joint of the robot needs a name (replay maps logs to joints by name)")
    acts, targets, servo = [], [], []
    for a in range(model.nu):
        acts.append(nm(mujoco.mjtObj.mjOBJ_ACTUATOR, a) or f"actuator_{a}")
        jid = int(model.actuator_trnid[a, 0])
        is_joint = int(model.actuator_trntype[a]) == int(mujoco.mjtTrn.mjTRN_JOINT)
        targets.append(joints[jid] if is_joint and jid >= 0 else "")
        g, b = model.actuator_gainprm[a], model.actuator_biasprm[a]
        servo.append(bool(is_joint and g[0] > 0 and math.isclose(b[1], -g[0], rel_tol=1e-9)))
    root = int(np.nonzero(model.body_parentid == 0)[0][1]) if model.nbody > 1 else 0
    bodies = tuple(nm(mujoco.mjtObj.mjOBJ_BODY, b) for b in range(1, model.nbody))
    return RobotInfo(
        name,
        prefix,
        nm(mujoco.mjtObj.mjOBJ_BODY, root),
        joints,
        tuple(acts),
        tuple(targets),
        tuple(servo),
        bodies,
    )


def calibrated_values(cal: Path) -> tuple[dict[str, float], dict[str, tuple[float, float]], list[str]]:
    """(fitted values by parameter name, randomisation ranges, the fit's warnings) of a calibrate output folder."""
    res = load_json(cal / "result.json", "calibration result")
    try:
        values = {str(k): float(v["value"]) for k, v in res["parameters"].items()}
    except (KeyError, TypeError, ValueError, AttributeError):
        raise InputError(cal / "result.json", "not a real2sim calibration result (no parameters)") from None
    ranges: dict[str, tuple[float, float]] = {}
    rpath = cal / "randomization.yaml"
    if rpath.is_file():
        import yaml

        try:
            doc = yaml.safe_load(rpath.read_text()) or {}
            ranges = {str(k): (float(v[0]), float(v[1])) for k, v in doc.items()}
        except (yaml.YAMLError, TypeError, ValueError, IndexError, AttributeError):
            raise InputError(rpath, "not a real2sim randomization.yaml ({name: [lo, hi]})") from None
    warnings = [str(w) for w in res.get("warnings", [])]
    return values, ranges, warnings


_INDEX = re.compile(r"^(.*)\[(\d+)\]$")


def resolve_values(model, values: dict[str, float], where: Path) -> list[tuple[Resolved, float]]:
    """Each fitted value bound to its model element (``calibration.params.Resolved``); a parameter naming an element
    the robot lacks is refused (the calibration was made on another model)."""
    from real2sim.calibration.params.resolve import resolve
    from real2sim.errors import ConfigError
    from real2sim.params import ParamSpec

    out = []
    for name, v in values.items():
        m = _INDEX.match(name)
        base, idx = (m.group(1), int(m.group(2))) if m else (name, None)
        try:
            hits = resolve([ParamSpec(base)], model)
        except ConfigError as exc:
            raise InputError(where, f"does not fit this robot: {exc}") from None
        p = next((h for h in hits if h.name == name), None)
        if p is None:
            raise InputError(where, f"parameter {name!r} does not resolve on the robot (index {idx})")
        out.append((p, v))
    return out


def apply_calibration(spec, model, values: dict[str, float], where: Path) -> None:
    """Write the fitted values into the robot's spec (the write-back ``calibrate`` uses for its calibrated MJCF)."""
    from real2sim.calibration.outputs.writeback import set_spec_value

    for p, v in resolve_values(model, values, where):
        set_spec_value(spec, p, v)


def scene_names(spec) -> dict[str, list[str]]:
    """The named elements of a spec by kind (bodies, joints, geoms, sites, actuators, meshes, ...)."""
    kinds = ("bodies", "joints", "geoms", "sites", "cameras", "lights", "actuators", "sensors", "tendons",
             "meshes", "materials", "textures", "keys", "equalities", "excludes")  # fmt: skip
    return {k: [e.name for e in getattr(spec, k) if e.name] for k in kinds if hasattr(spec, k)}


def check_prefix(scene_spec, prefix: str, where: Path) -> None:
    """Refuse a prefix the scene already uses: attached names would collide with the scene's own."""
    for kind, names in scene_names(scene_spec).items():
        taken = [n for n in names if n.startswith(prefix)]
        if taken:
            raise InputError(
                where,
                f"the scene already has {kind} named {prefix}... ({', '.join(taken[:5])}); choose another prefix",
            )


def attach_robot(scene_spec, robot_spec, prefix: str, world_from_base: np.ndarray, where: Path):
    """Attach ``robot_spec``'s world under a frame at ``world_from_base`` with ``prefix``; returns the frame."""
    frame = scene_spec.worldbody.add_frame(
        pos=[float(x) for x in world_from_base[:3, 3]],
        quat=[float(x) for x in matrix_to_quat(world_from_base[:3, :3])],
    )
    frame.name = f"{prefix}base_frame"
    try:
        scene_spec.attach(robot_spec, prefix=prefix, frame=frame)
    except ValueError as exc:
        msg = " ".join(str(exc).split()).removeprefix("Error: ")
        raise InputError(where, f"cannot attach the robot: {msg}") from None
    return frame


def check_attached(model, info: RobotInfo, scene_bodies: list[str], where: Path) -> None:
    """Every robot and scene body is in the compiled twin under its expected name."""
    import mujoco

    missing = [
        n
        for n in [info.prefix + b for b in info.bodies] + scene_bodies
        if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, n) < 0
    ]
    if missing:
        raise InputError(where, f"bodies missing after composing: {', '.join(missing[:8])}")
