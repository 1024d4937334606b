"""Resolve ``ParamSpec`` names (with ``*`` wildcards) against a model and get/set their values on an MjModel.

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
from dataclasses import dataclass, replace

import numpy as np

from real2sim.errors import ConfigError
from real2sim.params import Kind, ParamSpec, parse_param_name

_OBJ: dict[Kind, str] = {
    "joint": "mjOBJ_JOINT",
    "body": "mjOBJ_BODY",
    "actuator": "mjOBJ_ACTUATOR",
    "geom": "mjOBJ_GEOM",
    "delay": "mjOBJ_ACTUATOR",
}

# Default bounds when the spec gives none: (lower, upper) as functions of the model value.
_POSITIVE = {"damping", "frictionloss", "armature", "mass", "stiffness", "friction", "kv"}


@dataclass(frozen=True)
class Resolved:
    """One scalar parameter bound to a model element."""

    spec: ParamSpec
    kind: Kind
    element: str
    attribute: str | None
    obj_id: int
    index: int = 0  # component for vector attributes

    @property
    def name(self) -> str:
        return self.spec.name


def _names(model, kind: Kind) -> list[str]:
    import mujoco

    obj = getattr(mujoco.mjtObj, _OBJ[kind])
    count = {
        "joint": model.njnt,
        "body": model.nbody,
        "actuator": model.nu,
        "geom": model.ngeom,
        "delay": model.nu,
    }[kind]
    return [mujoco.mj_id2name(model, obj, i) or "" for i in range(count)]


def resolve(specs: list[ParamSpec] | tuple[ParamSpec, ...], model) -> list[Resolved]:
    """Expand wildcards and vector attributes; unknown names → ``ConfigError`` naming the parameter."""
    out: list[Resolved] = []
    seen: set[str] = set()
    for spec in specs:
        spec.validate()
        kind, element, attr = parse_param_name(spec.name)
        names = _names(model, kind)
        hits = [i for i, n in enumerate(names) if n and fnmatch.fnmatchcase(n, element)]
        if kind == "joint":
            hits = [i for i in hits if model.jnt_type[i] in (2, 3)]  # slide/hinge: one dof
        if kind == "body":
            hits = [i for i in hits if i > 0]  # never the world body
        if not hits:
            raise ConfigError(
                f"parameter {spec.name!r}: no {kind} named {element!r} in the model "
                f"(has: {', '.join(n for n in names if n) or 'none'})"
            )
        for i in hits:
            comps = 3 if (kind == "body" and attr in ("com", "inertia")) else 1
            for c in range(comps):
                base = f"{kind}:{names[i]}" + (f".{attr}" if attr else "")
                name = f"{base}[{c}]" if comps > 1 else base
                if name in seen:
                    continue
                seen.add(name)
                out.append(Resolved(replace(spec, name=name), kind, names[i], attr, i, c))
    return out


def get_value(model, p: Resolved) -> float:
    i = p.obj_id
    if p.kind == "joint":
        assert p.attribute is not None  # every joint parameter names its attribute (parse_param_name)
        dof = model.jnt_dofadr[i]
        return float(
            {
                "damping": model.dof_damping,
                "frictionloss": model.dof_frictionloss,
                "armature": model.dof_armature,
                "stiffness": model.jnt_stiffness,
            }[p.attribute][i if p.attribute == "stiffness" else dof]
        )
    if p.kind == "body":
        if p.attribute == "mass":
            return float(model.body_mass[i])
        if p.attribute == "com":
            return float(model.body_ipos[i, p.index])
        return float(model.body_inertia[i, p.index])
    if p.kind == "actuator":
        return _get_actuator(model, i, p.attribute)
    if p.kind == "geom":
        return float(model.geom_friction[i, 0])
    return 0.0  # delay: not stored in the model


def set_value(model, p: Resolved, v: float) -> None:
    i = p.obj_id
    if p.kind == "joint":
        dof = model.jnt_dofadr[i]
        if p.attribute == "damping":
            model.dof_damping[dof] = v
        elif p.attribute == "frictionloss":
            model.dof_frictionloss[dof] = v
        elif p.attribute == "armature":
            model.dof_armature[dof] = v
        else:
            model.jnt_stiffness[i] = v
    elif p.kind == "body":
        if p.attribute == "mass":
            model.body_mass[i] = v
        elif p.attribute == "com":
            model.body_ipos[i, p.index] = v
            # compiled bodies whose inertial frame coincided with the body frame skip ipos at run time
            model.body_sameframe[i] = 0
        else:
            model.body_inertia[i, p.index] = v
    elif p.kind == "actuator":
        _set_actuator(model, i, p.attribute, v)


def _get_actuator(model, i: int, attr: str | None) -> float:
    if attr == "kp":
        return float(model.actuator_gainprm[i, 0])
    if attr == "kv":
        return float(-model.actuator_biasprm[i, 2])
    if attr == "forcerange":
        return float(max(abs(model.actuator_forcerange[i, 0]), abs(model.actuator_forcerange[i, 1])))
    return float(model.actuator_gainprm[i, 0] if attr == "gain" else model.actuator_biasprm[i, 0])


def _set_actuator(model, i: int, attr: str | None, v: float) -> None:
    if attr in ("gain", "kp"):
        model.actuator_gainprm[i, 0] = v
        if attr == "kp":  # position servo: force = kp (ctrl - q) - kv qdot
            model.actuator_biastype[i] = 1
            model.actuator_biasprm[i, 1] = -v
    elif attr == "kv":
        model.actuator_biastype[i] = 1
        model.actuator_biasprm[i, 2] = -v
    elif attr == "forcerange":
        model.actuator_forcelimited[i] = 1
        model.actuator_forcerange[i] = (-v, v)
    else:
        model.actuator_biastype[i] = 1  # affine: bias = biasprm[0] + ...
        model.actuator_biasprm[i, 0] = v


def default_bounds(p: Resolved, value: float) -> tuple[float, float]:
    """Bounds for a parameter whose spec gives none: physical sign constraints and a generous range."""
    lo, hi = p.spec.lower, p.spec.upper
    if math.isfinite(lo) and math.isfinite(hi):
        return lo, hi
    scale = max(abs(value), 1e-3)
    if p.kind == "delay":
        dlo, dhi = 0.0, 0.1
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


def set_spec_actuator(a, attribute: str | None, v: float) -> None:
    """Write an actuator parameter into an ``MjSpec`` actuator (the MJCF write-back of ``set_value``)."""
    import mujoco

    g, b = np.array(a.gainprm, float), np.array(a.biasprm, float)
    if attribute in ("gain", "kp"):
        g[0] = v
    if attribute in ("bias", "kp", "kv"):
        a.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        idx = {"bias": 0, "kp": 1, "kv": 2}[attribute]
        b[idx] = v if attribute == "bias" else -v
    if attribute == "forcerange":
        a.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        a.forcerange = np.array([-v, v])
    a.gainprm, a.biasprm = g, b
