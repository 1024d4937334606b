"""Settling: dynamic objects dropped onto the support top, then simulated until they rest; their rest poses become
the ``home`` keyframe."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from real2sim.export.config import ExportCfg
from real2sim.export.objects.prepare import PlacedObject, PreparedObject, lowest_z
from real2sim.transforms import pose_matrix

if TYPE_CHECKING:
    import mujoco

log = logging.getLogger(__name__)

SETTLE_RANGE = 0.05
"""Dynamic objects whose lowest point is within this distance [m] above (or any depth below) the support top are
placed exactly on it; higher ones are left where they are (they may rest on another object)."""


def drop_onto_support(o: PreparedObject, t: np.ndarray, top: float) -> np.ndarray:
    """``world_from_object`` ``t`` lowered (or raised) so the object's lowest collision point is on the support top
    ``top`` [m], if it is within ``SETTLE_RANGE`` above it (or anywhere below)."""
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


def body_speed(data: mujoco.MjData, model: mujoco.MjModel, body: int, radius: float) -> float:
    """Fastest speed [m/s] of a point within ``radius`` of the body origin (linear + angular x radius)."""
    import mujoco

    v = np.zeros(6)
    mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, body, v, 0)
    return float(np.linalg.norm(v[3:]) + np.linalg.norm(v[:3]) * radius)


def presettle(
    folder: Path, name: str, placed: list[PlacedObject], support, cfg: ExportCfg
) -> list[PlacedObject]:
    """Let dynamic objects come to rest on their collision geometry (a scan's pose rocks by a millimetre or so).

    Steps until every dynamic object has been at rest (``REST_SPEED``) for ``REST_CHUNKS`` chunks in a row, at most
    ``SETTLE_MAX_SECONDS``; objects that moved more than ``SETTLE_LIMIT`` or never came to rest keep their pose.
    """
    import mujoco

    from real2sim.export.writers.mjcf import build_model

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
            calm[n] = calm[n] + 1 if body_speed(data, model, b, radius[n]) < REST_SPEED else 0
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
