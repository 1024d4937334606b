"""Resolve ``ParamSpec`` names (with ``*`` wildcards) against a model and get/set their values on an MjModel (each
kind's own module does the reading and writing: ``kinds.KINDS``).

Every resolved parameter is one scalar. Vector attributes are split: ``body:NAME.com`` → ``body:NAME.com[0..2]``,
``body:NAME.inertia`` → principal moments ``body:NAME.inertia[0..2]`` about the model's principal axes (fitted
through ``inertial.Reparam`` — log second moments — so every iterate is a physically realisable rigid body),
``geom:NAME.friction`` → sliding friction. ``actuator:NAME.gain`` is the first gain parameter,
``actuator:NAME.bias`` a constant force added to the actuator output (MuJoCo affine bias ``biasprm[0]``).
Position servos: ``actuator:NAME.kp`` sets gainprm[0] = kp and biasprm[1] = -kp together, ``.kv`` biasprm[2] = -kv,
``.forcerange`` a symmetric force limit ±value. ``delay:NAME`` is not a model field: the simulator shifts that
actuator's control by it.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import replace

import numpy as np

from real2sim.calibration.params.kinds import KINDS
from real2sim.calibration.params.resolved import Resolved
from real2sim.errors import ConfigError
from real2sim.params import ParamSpec, parse_param_name

# Default bounds when the spec gives none: (lower, upper) as functions of the model value.
_POSITIVE = {"damping", "frictionloss", "armature", "mass", "stiffness", "friction", "kv"}


def _names(model, kind: str) -> list[str]:
    import mujoco

    k = KINDS[kind]
    obj = getattr(mujoco.mjtObj, k.obj)
    return [mujoco.mj_id2name(model, obj, i) or "" for i in range(k.count(model))]


def resolve(specs: list[ParamSpec] | tuple[ParamSpec, ...], model) -> list[Resolved]:
    """Expand wildcards and vector attributes; unknown names → ``ConfigError`` naming the parameter."""
    out: list[Resolved] = []
    seen: set[str] = set()
    for spec in specs:
        spec.validate()
        kind, element, attr = parse_param_name(spec.name)
        names = _names(model, kind)
        k = KINDS[kind]
        hits = [
            i for i, n in enumerate(names) if n and fnmatch.fnmatchcase(n, element) and k.selectable(model, i)
        ]
        if not hits:
            raise ConfigError(
                f"parameter {spec.name!r}: no {kind} named {element!r} in the model "
                f"(has: {', '.join(n for n in names if n) or 'none'})"
            )
        for i in hits:
            comps = k.components(attr)
            for c in range(comps):
                base = f"{kind}:{names[i]}" + (f".{attr}" if attr else "")
                name = f"{base}[{c}]" if comps > 1 else base
                if name in seen:
                    continue
                seen.add(name)
                out.append(Resolved(replace(spec, name=name), kind, names[i], attr, i, c))
    return out


def get_value(model, p: Resolved) -> float:
    """The value of ``p`` in the compiled ``model``."""
    return KINDS[p.kind].get(model, p)


def set_value(model, p: Resolved, v: float) -> None:
    """Set ``p`` = ``v`` in the compiled ``model``."""
    KINDS[p.kind].set(model, p, v)


def default_bounds(p: Resolved, value: float) -> tuple[float, float]:
    """Bounds for a parameter whose spec gives none: physical sign constraints and a generous range."""
    lo, hi = p.spec.lower, p.spec.upper
    if math.isfinite(lo) and math.isfinite(hi):
        return lo, hi
    scale = max(abs(value), 1e-3)
    own = KINDS[p.kind].default_bounds(p, value)
    if own is not None:
        dlo, dhi = own
    elif p.attribute in _POSITIVE or (p.kind == "body" and p.attribute == "inertia"):
        dlo, dhi = 0.0, max(10.0 * scale, 1.0 if p.attribute in ("damping", "frictionloss") else 10 * scale)
        if p.attribute == "mass" or p.attribute == "inertia":
            dlo = 1e-3 * scale
    elif p.attribute in ("gain", "kp", "forcerange"):
        dlo, dhi = 0.2 * scale, 5.0 * scale
    elif p.attribute == "com":
        dlo, dhi = value - 0.5, value + 0.5
    else:  # bias [N or N·m]: a constant offset, up to 1 (or 10 × its size)
        span = max(10.0 * abs(value), 1.0)
        dlo, dhi = value - span, value + span
    return (lo if math.isfinite(lo) else dlo, hi if math.isfinite(hi) else dhi)


def inertia_is_physical(model) -> list[str]:
    """Bodies whose principal moments violate the triangle inequality or are non-positive."""
    bad = []
    for b in range(1, model.nbody):
        if model.body_mass[b] <= 0:
            continue
        a = np.sort(model.body_inertia[b])
        if a[0] <= 0 or a[0] + a[1] < a[2] * (1 - 1e-9):
            bad.append(str(b))
    return bad


def apply(model, params: list[Resolved], values: np.ndarray) -> None:
    for p, v in zip(params, values, strict=True):
        set_value(model, p, float(v))
