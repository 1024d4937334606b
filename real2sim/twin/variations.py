"""Randomised copies of an episode: each object's start pose shifted and turned within the stated ranges (redrawn
until nothing starts penetrating and every object still stands on the support), and the robot's physics drawn
within the calibration's randomisation ranges. Every draw is recorded; the same seed gives the same draws."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np

from real2sim.twin.geometry import support_top
from real2sim.twin.home import Ids

TRIES = 50
"""Draws of object poses tried per variation before the last one is kept (with a note)."""
START_PENETRATION = 1e-3
"""Deepest contact [m] between two objects (or an object and the robot) allowed at a variation's start."""


@dataclass(frozen=True)
class Draw:
    """One variation: the objects' start poses (objects, 7) and the physics values, with what was drawn."""

    variation: int
    object_start: np.ndarray
    objects: dict[str, dict]
    physics: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"variation": self.variation, "objects": self.objects, "physics": self.physics,
                "notes": list(self.notes)}  # fmt: skip


def _yaw_quat(q: np.ndarray, yaw: float) -> np.ndarray:
    """``q`` (wxyz) turned by ``yaw`` [rad] about the world's vertical."""
    c, s = math.cos(yaw / 2), math.sin(yaw / 2)
    w, x, y, z = q
    out = np.array([c * w - s * z, c * x - s * y, c * y + s * x, c * z + s * w])
    return out / np.linalg.norm(out)


def home_objects(model, ix: Ids) -> np.ndarray:
    """(objects, 7) the objects' poses in the home keyframe."""
    return np.array([model.key_qpos[0][ix.object_qpos[n] : ix.object_qpos[n] + 7] for n in ix.objects])


def _start_ok(model, data, ix: Ids) -> bool:
    import mujoco

    mujoco.mj_forward(model, data)
    objs = set(ix.objects.values())
    for c in data.contact[: data.ncon]:
        b1, b2 = int(model.geom_bodyid[c.geom1]), int(model.geom_bodyid[c.geom2])
        if 0 in (b1, b2):
            continue  # object on the support: resting contact
        if (b1 in objs or b2 in objs) and c.dist < -START_PENETRATION:
            return False
    return True


def draw(
    model,
    ix: Ids,
    rng: np.random.Generator,
    k: int,
    shift: float,
    yaw_deg: float,
    ranges: dict,
    robot_start: tuple[np.ndarray, np.ndarray] | None = None,
) -> Draw:
    """Variation ``k``'s draw (``k`` = 0: the episode as recorded, nothing drawn); ``robot_start`` (qpos addresses,
    values): where the episode starts the robot, which the drawn objects must not start inside."""
    import mujoco

    home = home_objects(model, ix)
    if k == 0:
        return Draw(0, home, {n: {"dx_m": 0.0, "dy_m": 0.0, "dyaw_deg": 0.0} for n in ix.objects})
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    mujoco.mj_forward(model, data)
    notes: list[str] = []
    tops = {n: support_top(model, data, *home[i, :2]) for i, n in enumerate(ix.objects)}
    for attempt in range(TRIES):
        start, rec = home.copy(), {}
        for i, n in enumerate(ix.objects):
            dx, dy = rng.uniform(-shift, shift, 2) if shift > 0 else (0.0, 0.0)
            dyaw = rng.uniform(-yaw_deg, yaw_deg) if yaw_deg > 0 else 0.0
            start[i, 0] += dx
            start[i, 1] += dy
            start[i, 3:] = _yaw_quat(home[i, 3:], math.radians(dyaw))
            rec[n] = {
                "dx_m": round(float(dx), 9),
                "dy_m": round(float(dy), 9),
                "dyaw_deg": round(float(dyaw), 9),
            }
        mujoco.mj_resetDataKeyframe(model, data, 0)
        if robot_start is not None:
            data.qpos[robot_start[0]] = robot_start[1]
        for i, n in enumerate(ix.objects):
            a = ix.object_qpos[n]
            data.qpos[a : a + 7] = start[i]
        same_support = all(
            (top := support_top(model, data, *start[i, :2])) is not None
            and tops[n] is not None
            and abs(top[0] - tops[n][0]) < 1e-4  # type: ignore[index]
            for i, n in enumerate(ix.objects)
        )
        if same_support and _start_ok(model, data, ix):
            break
        if attempt == TRIES - 1:
            notes.append(f"no draw without penetration in {TRIES} tries; the last one is kept")
    for i, n in enumerate(ix.objects):
        rec[n]["start"] = [round(float(x), 9) + 0.0 for x in start[i]]
    physics = {name: float(rng.uniform(lo, hi)) for name, (lo, hi) in sorted(ranges.items())}
    return Draw(k, start, rec, physics, tuple(notes))


def varied_model(model, physics: dict[str, float], prefix: str):
    """A copy of the twin's model with the drawn physics values set (parameter names of the robot's own model)."""
    if not physics:
        return model
    from real2sim.calibration.params.resolve import resolve, set_value
    from real2sim.params import ParamSpec, parse_param_name

    m = copy.deepcopy(model)
    for name, v in physics.items():
        base, _, idx = name.partition("[")
        kind, element, attr = parse_param_name(base)
        full = f"{kind}:{prefix}{element}" + (f".{attr}" if attr else "")
        for p in resolve([ParamSpec(full)], m):
            if p.index == (int(idx.rstrip("]")) if idx else 0):
                if p.kind == "delay":
                    _set_delay(m, p.obj_id, v)
                else:
                    set_value(m, p, v)
    return m


def _set_delay(model, a: int, v: float) -> None:
    """An actuator's delay [s], within what its history buffer holds."""
    cap = max(0.0, (int(model.actuator_history[a, 0]) - 2) * float(model.opt.timestep))
    model.actuator_delay[a] = min(max(v, 0.0), cap)
