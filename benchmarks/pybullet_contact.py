"""The contact benchmark's PyBullet fit: the same cube tosses fitted for PyBullet's lateral, spinning and rolling
friction and restitution, so a PyBullet user gets values fitted for PyBullet, scored as the MuJoCo fits are.

Many cubes share one PyBullet world (each collides only with the plane), so a batch of windows is one set of
``stepSimulation`` calls. Bullet multiplies the two bodies' lateral friction and restitution, and combines
spinning / rolling friction as ``s0 f1 + f0 s1``: the plane gets lateral friction 1, restitution 1 and no
spinning / rolling friction, so the cube's values are the contact's. PyBullet's defaults are its own: 0.5 lateral
friction on both bodies (0.25 in contact), no restitution, spinning or rolling friction.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from real2sim.calibration.contact.logs import rotate_to_world

DT = 1.0 / 240.0
"""PyBullet's default time step."""
NAMES = ("lateral_friction", "spinning_friction", "rolling_friction", "restitution")
LOWER = np.array([1e-3, 1e-6, 1e-7, 1e-3])
UPPER = np.array([3.0, 0.5, 0.05, 0.95])
START = np.array([0.25, 1e-3, 1e-4, 0.1])
"""Where the fit starts: PyBullet's default contact friction (0.5 x 0.5), small spinning / rolling, a little bounce."""
BATCH = 400


@dataclass(frozen=True)
class Starts:
    """Cube states to start from (world position, w-x-y-z quaternion, world linear and body angular velocity)."""

    pos: np.ndarray
    quat: np.ndarray
    linvel: np.ndarray
    angvel_body: np.ndarray


class BulletCubes:
    """One PyBullet world: a plane and ``n`` cubes (side ``side``, ``mass``) that collide only with the plane."""

    def __init__(self, n: int, side: float, mass: float) -> None:
        import pybullet as pb

        self.pb = pb
        self.cid = pb.connect(pb.DIRECT)
        c = self.cid
        pb.setGravity(0, 0, -9.81, physicsClientId=c)
        pb.setTimeStep(DT, physicsClientId=c)
        self.plane = pb.createMultiBody(
            0, pb.createCollisionShape(pb.GEOM_PLANE, physicsClientId=c), physicsClientId=c
        )
        pb.setCollisionFilterGroupMask(self.plane, -1, 1, 2, physicsClientId=c)
        shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=[side / 2] * 3, physicsClientId=c)
        self.cubes = []
        for k in range(n):
            b = pb.createMultiBody(mass, shape, basePosition=[0, 0, 10.0 + k], physicsClientId=c)
            pb.setCollisionFilterGroupMask(b, -1, 2, 1, physicsClientId=c)
            self.cubes.append(b)

    def set_contact(self, values: np.ndarray | None) -> None:
        """The cube's (lateral, spinning, rolling, restitution) as the contact's; None: PyBullet's defaults."""
        pb, c = self.pb, self.cid
        if values is None:
            pb.changeDynamics(self.plane, -1, lateralFriction=0.5, spinningFriction=0, rollingFriction=0,
                              restitution=0, physicsClientId=c)  # fmt: skip
            vals = (0.5, 0.0, 0.0, 0.0)
        else:
            pb.changeDynamics(self.plane, -1, lateralFriction=1, spinningFriction=0, rollingFriction=0,
                              restitution=1, physicsClientId=c)  # fmt: skip
            vals = tuple(float(v) for v in values)
        for b in self.cubes:
            pb.changeDynamics(b, -1, lateralFriction=vals[0], spinningFriction=vals[1], rollingFriction=vals[2],
                              restitution=vals[3], physicsClientId=c)  # fmt: skip

    def run(self, s: Starts, nstep: int, record: bool = False) -> np.ndarray:
        """Positions after ``nstep`` steps (B, 3), or after every step (B, nstep, 3) with ``record``."""
        pb, c = self.pb, self.cid
        out = np.zeros((s.pos.shape[0], nstep, 3) if record else (s.pos.shape[0], 3))
        w_world = rotate_to_world(s.quat, s.angvel_body)
        for a in range(0, s.pos.shape[0], len(self.cubes)):
            idx = range(a, min(a + len(self.cubes), s.pos.shape[0]))
            for k, b in enumerate(self.cubes):  # far apart first: no contact kept from the last batch
                pb.resetBasePositionAndOrientation(b, [0, 0, 10.0 + k], [0, 0, 0, 1], physicsClientId=c)
            pb.performCollisionDetection(physicsClientId=c)
            used = list(zip(idx, self.cubes, strict=False))
            for i, b in used:
                q = s.quat[i]
                pb.resetBasePositionAndOrientation(
                    b, s.pos[i].tolist(), [q[1], q[2], q[3], q[0]], physicsClientId=c
                )
                pb.resetBaseVelocity(b, s.linvel[i].tolist(), w_world[i].tolist(), physicsClientId=c)
            for k in range(nstep):
                pb.stepSimulation(physicsClientId=c)
                if record or k == nstep - 1:
                    for i, b in used:
                        p = pb.getBasePositionAndOrientation(b, physicsClientId=c)[0]
                        if record:
                            out[i, k] = p
                        else:
                            out[i] = p
        return out

    def close(self) -> None:
        self.pb.disconnect(physicsClientId=self.cid)


def window_starts(win, nq: int) -> Starts:
    """The MuJoCo windows' starting states (``real2sim`` ``Windows``, one free body at qpos[0:7])."""
    s = win.state
    return Starts(s[:, 1:4], s[:, 4:8], s[:, 1 + nq : 4 + nq], s[:, 4 + nq : 7 + nq])


def scores(sim: BulletCubes, values: np.ndarray | None, logs, hold_win, nq: int, side: float) -> dict:
    """Held-out errors in cube sides: 0.1 s windows from every sample, whole toss from the first, at rest."""
    sim.set_contact(values)
    end = sim.run(window_starts(hold_win, nq), hold_win.nstep)
    we = np.linalg.norm(end - hold_win.target[:, 0, :3], axis=1) / side
    window = float(np.mean([we[hold_win.log_index == k].mean() for k in range(len(logs))]))
    s0 = np.stack([np.r_[lg.pose["cube"][0], lg.vel["cube"][0]] for lg in logs])  # pos, quat, linvel, angvel
    first = Starts(s0[:, :3], s0[:, 3:7], s0[:, 7:10], s0[:, 10:13])
    nstep = max(int(np.ceil(lg.time[-1] / DT)) + 1 for lg in logs)
    path = sim.run(first, nstep, record=True)
    st = np.arange(1, nstep + 1) * DT
    whole, rest = [], []
    for k, lg in enumerate(logs):
        real = lg.pose["cube"][:, :3]
        sim_p = np.stack([np.interp(lg.time, st, path[k, :, c], left=real[0, c]) for c in range(3)], 1)
        e = np.linalg.norm(sim_p - real, axis=1) / side
        whole.append(e.mean())
        rest.append(e[-1])
    return {"window": window, "whole": float(np.mean(whole)), "rest": float(np.mean(rest))}


def fit(sim: BulletCubes, train_win, nq: int, side: float, max_nfev: int = 30) -> dict:
    """Least squares (soft-L1, 0.05 cube sides) over the training windows in log / logit space."""
    from scipy.optimize import least_squares

    starts = window_starts(train_win, nq)
    target = train_win.target[:, 0, :3]

    def to_z(x: np.ndarray) -> np.ndarray:
        return np.r_[np.log(x[:3]), np.log(x[3] / (1 - x[3]))]

    def to_x(z: np.ndarray) -> np.ndarray:
        return np.r_[np.exp(z[:3]), 1 / (1 + np.exp(-z[3]))]

    def f(z: np.ndarray) -> np.ndarray:
        sim.set_contact(to_x(z))
        return ((sim.run(starts, train_win.nstep) - target) / side).ravel()

    t0, c0 = time.perf_counter(), time.process_time()
    out = least_squares(f, to_z(START), bounds=(to_z(LOWER), to_z(UPPER)), diff_step=0.05, ftol=1e-4,
                        max_nfev=max_nfev, loss="soft_l1", f_scale=0.05)  # fmt: skip
    return {
        "values": to_x(out.x),
        "wall_s": time.perf_counter() - t0,
        "cpu_s": time.process_time() - c0,
        "nfev": int(out.nfev),
        "windows": int(starts.pos.shape[0]),
    }
