"""The twin at home: the scanned robot cut out of the scene, nothing penetrating, and the ``home`` keyframe in which
the arm holds its pose and every object rests (checked over a few simulated seconds)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from real2sim.errors import InputError
from real2sim.twin.compose import RobotInfo
from real2sim.twin.geometry import body_geoms, geom_points, hulls_of

SETTLE_SECONDS = 0.5
"""Simulated time [s] the twin is given at its home pose before the keyframe is taken (the arm sags onto its servos'
steady-state error, the objects onto their contacts)."""
INSIDE_FRACTION = 0.5
"""A scene geom with at least this fraction of its points inside the robot's links at home is cut out."""
MAX_PENETRATION = 1e-3
"""Largest penetration [m] of the robot into the scene at home (deeper: the pose puts the robot inside it)."""


@dataclass(frozen=True)
class Ids:
    """Element ids of the robot and the scene's objects in a compiled twin."""

    bodies: set[int]
    qpos: np.ndarray
    """qpos address of each robot joint (in ``RobotInfo.joints`` order)."""
    dofs: np.ndarray
    actuators: np.ndarray
    servo_qpos: dict[int, int]
    """Actuator id -> the qpos address of the joint it holds (position servos)."""
    objects: dict[str, int]
    """Free body name -> body id (the scene's movable objects)."""
    object_qpos: dict[str, int]


def ids(model, info: RobotInfo) -> Ids:
    import mujoco

    def find(obj, name):
        i = mujoco.mj_name2id(model, obj, info.prefix + name)
        if i < 0:
            raise KeyError(info.prefix + name)
        return i

    joints = [find(mujoco.mjtObj.mjOBJ_JOINT, j) for j in info.joints]
    acts = [find(mujoco.mjtObj.mjOBJ_ACTUATOR, a) for a in info.actuators]
    bodies = {find(mujoco.mjtObj.mjOBJ_BODY, b) for b in info.bodies}
    servo = {
        a: int(model.jnt_qposadr[find(mujoco.mjtObj.mjOBJ_JOINT, j)])
        for a, j, s in zip(acts, info.actuator_joints, info.position_servo, strict=True)
        if s and j
    }
    objects, oq = {}, {}
    for j in range(model.njnt):
        b = int(model.jnt_bodyid[j])
        if int(model.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_FREE) and b not in bodies:
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or f"body_{b}"
            objects[name] = b
            oq[name] = int(model.jnt_qposadr[j])
    return Ids(
        bodies,
        np.array([model.jnt_qposadr[j] for j in joints], int),
        np.array([model.jnt_dofadr[j] for j in joints], int),
        np.array(acts, int),
        servo,
        objects,
        oq,
    )


def set_robot(model, data, ix: Ids, q: np.ndarray) -> None:
    """Robot joints at ``q`` (one value per joint), servos' goals at their joints' positions."""
    data.qpos[ix.qpos] = q
    data.qvel[ix.dofs] = 0.0
    for a, adr in ix.servo_qpos.items():
        data.ctrl[a] = data.qpos[adr]


@dataclass(frozen=True)
class Cut:
    """A scene geom cut out because it lies inside the robot's links at home (the scanned robot)."""

    geom: str
    body: str
    inside: float
    """Fraction of its points inside the robot."""


def find_cuts(model, data, ix: Ids, margin: float) -> list[Cut]:
    """Colliding scene geoms (objects' and the world's) mostly inside the robot's geoms (visual ones included).
    Only robot geoms whose bounding box meets a scene geom's are turned into hulls (qhull on a link's mesh is the
    slow part)."""
    import mujoco

    scene = []
    for g in range(model.ngeom):
        b = int(model.geom_bodyid[g])
        if b in ix.bodies or not (model.geom_contype[g] or model.geom_conaffinity[g]):
            continue
        if int(model.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_PLANE):
            continue
        pts = geom_points(model, data, g)
        scene.append((g, b, pts, pts.min(0), pts.max(0)))
    robot = []
    for g in body_geoms(model, ix.bodies):
        pts = geom_points(model, data, g)
        lo, hi = pts.min(0), pts.max(0)
        if any(np.all(lo + margin < shi) and np.all(slo + margin < hi) for _, _, _, slo, shi in scene):
            robot.append(g)
    if not robot:
        return []
    from real2sim.export.collision.fidelity import inside_any

    hulls = hulls_of(model, data, robot)
    cuts = []
    for g, b, pts, _, _ in scene:
        frac = float(np.mean(inside_any(pts, hulls, -margin)))
        if frac >= INSIDE_FRACTION:
            cuts.append(
                Cut(
                    mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) or f"geom {g}",
                    mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or "world",
                    round(frac, 6),
                )
            )
    return cuts


def apply_cuts(spec, model, cuts: list[Cut]) -> list[str]:
    """Delete the cut geoms from ``spec``, and an object whose colliding geoms are all cut (it is the scanned robot,
    or part of it) with its body; returns the objects removed whole."""
    import mujoco

    by_body: dict[str, set[str]] = {}
    for c in cuts:
        by_body.setdefault(c.body, set()).add(c.geom)
    removed = []
    for body, geoms in by_body.items():
        b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body) if body != "world" else 0
        colliding = {
            mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) for g in body_geoms(model, {b}, True)
        }
        if b > 0 and colliding <= geoms:
            spec.delete(spec.body(body))
            removed.append(body)
            continue
        for g in geoms:
            spec.delete(spec.geom(g))
    return removed


def penetrations(model, data, ix: Ids, limit: float, self_contacts: bool = False) -> list[str]:
    """Contacts at the current state in which the robot goes deeper than ``limit`` [m] into the scene (and, with
    ``self_contacts``, into itself), deepest first, each pair once."""
    import mujoco

    mujoco.mj_forward(model, data)
    deepest: dict[tuple[str, str], float] = {}
    for c in data.contact[: data.ncon]:
        r1, r2 = int(model.geom_bodyid[c.geom1]) in ix.bodies, int(model.geom_bodyid[c.geom2]) in ix.bodies
        if not (r1 or r2) or (r1 and r2 and not self_contacts) or c.dist >= -limit:
            continue
        g1 = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, c.geom1) or f"geom {c.geom1}"
        g2 = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, c.geom2) or f"geom {c.geom2}"
        key = (g1, g2)
        deepest[key] = max(deepest.get(key, 0.0), -float(c.dist))
    order = sorted(deepest.items(), key=lambda kv: (-kv[1], kv[0]))
    return [f"{a} and {b} by {d * 1e3:.1f} mm" for (a, b), d in order]


@dataclass(frozen=True)
class HomeCheck:
    """The home keyframe and how still it is over ``seconds`` of simulation from it."""

    qpos: np.ndarray
    ctrl: np.ndarray
    seconds: float
    object_motion: dict[str, float]
    """Largest displacement [m] of each object from its home position."""
    robot_drift: float
    """Largest joint motion [rad or m] of the robot from its home pose."""
    warnings: dict[str, int] = field(default_factory=dict)

    @property
    def max_object_motion(self) -> float:
        return max(self.object_motion.values(), default=0.0)

    def to_json(self, limit: float) -> dict:
        return {
            "seconds": self.seconds,
            "max_object_motion_m": round(self.max_object_motion, 9),
            "object_motion_m": {k: round(v, 9) for k, v in self.object_motion.items()},
            "robot_drift": round(self.robot_drift, 9),
            "limit_m": limit,
            "rests": self.max_object_motion < limit,
            "mujoco_warnings": self.warnings,
            "robot_qpos": None,
        }


def warning_counts(data) -> dict[str, int]:
    import mujoco

    names = {int(v): k.removeprefix("mjWARN_") for k, v in mujoco.mjtWarning.__members__.items()}
    return {names.get(i, str(i)): int(w.number) for i, w in enumerate(data.warning) if w.number}


def settle_home(model, data, ix: Ids, q_home: np.ndarray, seconds: float) -> HomeCheck:
    """Settle from the package's object poses with the robot at ``q_home`` (servos holding it), take that state as
    home, then simulate ``seconds`` from it and measure how far anything moves."""
    import mujoco

    set_robot(model, data, ix, q_home)
    n = max(1, int(round(SETTLE_SECONDS / model.opt.timestep)))
    mujoco.mj_step(model, data, nstep=n)
    qpos = data.qpos.copy()
    ctrl = data.ctrl.copy()
    mujoco.mj_resetData(model, data)
    data.qpos[:], data.ctrl[:] = qpos, ctrl
    mujoco.mj_forward(model, data)
    start = {k: data.xpos[b].copy() for k, b in ix.objects.items()}
    moved = dict.fromkeys(ix.objects, 0.0)
    drift = 0.0
    chunk = max(1, int(round(0.05 / model.opt.timestep)))
    steps = int(round(seconds / model.opt.timestep))
    done = 0
    while done < steps:
        k = min(chunk, steps - done)
        mujoco.mj_step(model, data, nstep=k)
        done += k
        for name, b in ix.objects.items():
            moved[name] = max(moved[name], float(np.linalg.norm(data.xpos[b] - start[name])))
        drift = max(drift, float(np.max(np.abs(data.qpos[ix.qpos] - qpos[ix.qpos]), initial=0.0)))
    return HomeCheck(qpos, ctrl, seconds, moved, drift, warning_counts(data))


def home_pose(robot_spec, robot_model, given: tuple[float, ...], where) -> np.ndarray:
    """The robot's joint positions at home: given, else its own ``home`` keyframe, else qpos0 (within range)."""
    nq = robot_model.nq
    if given:
        if len(given) != robot_model.njnt or nq != robot_model.njnt:
            raise InputError(
                where,
                f"home gives {len(given)} joint positions; the robot has {robot_model.njnt} joints "
                "(one value per hinge or slide joint)",
            )
        q = np.asarray(given, float)
    else:
        import mujoco

        k = mujoco.mj_name2id(robot_model, mujoco.mjtObj.mjOBJ_KEY, "home")
        q = (robot_model.key_qpos[k] if k >= 0 else robot_model.qpos0).astype(float).copy()
    lim = robot_model.jnt_limited.astype(bool)
    adr = robot_model.jnt_qposadr
    for j in np.nonzero(lim)[0]:
        lo, hi = robot_model.jnt_range[j]
        if not lo - 1e-9 <= q[adr[j]] <= hi + 1e-9:
            raise InputError(
                where, f"home puts joint {j} at {q[adr[j]]:.4g}, outside its range [{lo:.4g}, {hi:.4g}]"
            )
    return q
