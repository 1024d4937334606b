"""Contact and inertial parameters of free bodies: ``geom:NAME.friction|solref|solimp[i]`` and
``body:NAME.mass|ipos|inertia[i]`` (``*`` wildcards; no index: every component), with the space each is fitted in.

A fitted geom gets a contact ``priority`` above every other geom in the model, so MuJoCo uses its friction, solref,
solimp and condim for its contacts whatever its partner's values (no max / solmix combination); torsional friction
acts only with condim >= 4 and rolling friction with condim 6, so those components of a condim-3 geom have no effect
and are reported as not identifiable.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

import numpy as np

from real2sim.errors import ConfigError

_RE = re.compile(r"^(geom|body):([^.\s\[\]]+)\.([a-z]+)(?:\[(\d+)\])?$")
SIZES = {"friction": 3, "solref": 2, "solimp": 5, "mass": 1, "ipos": 3, "com": 3, "inertia": 3}
ATTRS = {"geom": ("friction", "solref", "solimp"), "body": ("mass", "ipos", "com", "inertia")}
SOLIMP_NAMES = ("dmin", "dmax", "width", "midpoint", "power")


@dataclass(frozen=True)
class ContactParam:
    """One scalar: ``kind:element.attribute[index]`` bound to model element ``obj_id``."""

    name: str
    kind: str
    element: str
    attribute: str
    index: int
    obj_id: int

    @property
    def space(self) -> str:
        """'log' (positive, scale-free), 'logit' (in (0, 1)) or 'lin'."""
        if self.attribute == "solimp" and self.index in (0, 1, 3):
            return "logit"
        if self.attribute in ("ipos", "com"):
            return "lin"
        return "log"

    def bounds(self, value: float, timestep: float) -> tuple[float, float]:
        """Physical bounds around the model value ``value``."""
        a, i = self.attribute, self.index
        if a == "friction":
            return ((1e-3, 3.0), (1e-6, 0.5), (1e-7, 0.05))[i]
        if a == "solref":
            return (2.0 * timestep, 0.5) if i == 0 else (0.05, 5.0)
        if a == "solimp":
            return ((1e-3, 0.9999), (1e-3, 0.9999), (1e-5, 0.05), (0.01, 0.99), (1.0, 10.0))[i]
        if a in ("ipos", "com"):
            return value - 0.05, value + 0.05
        return 0.2 * value, 5.0 * value  # mass, inertia

    def effective(self, model) -> bool:
        """Whether it can change the simulation (torsional / rolling friction need condim 4 / 6)."""
        if self.attribute == "friction" and self.index > 0:
            return int(model.geom_condim[self.obj_id]) >= (4 if self.index == 1 else 6)
        return True


def resolve_contact(names: tuple[str, ...] | list[str], model) -> list[ContactParam]:
    """Expand wildcards and vector attributes against the model; unknown names → ``ConfigError``."""
    import mujoco

    out: list[ContactParam] = []
    seen: set[str] = set()
    for full in names:
        m = _RE.match(full)
        if m is None:
            raise ConfigError(
                f"parameter {full!r}: expected geom:NAME.friction|solref|solimp[i] or body:NAME.mass|ipos|inertia[i]"
            )
        kind, element, attr, idx = m.group(1), m.group(2), m.group(3), m.group(4)
        if attr not in ATTRS[kind]:
            raise ConfigError(f"parameter {full!r}: {kind} attribute must be one of {', '.join(ATTRS[kind])}")
        if idx is not None and int(idx) >= SIZES[attr]:
            raise ConfigError(
                f"parameter {full!r}: {attr} has {SIZES[attr]} components (index 0..{SIZES[attr] - 1})"
            )
        obj = mujoco.mjtObj.mjOBJ_GEOM if kind == "geom" else mujoco.mjtObj.mjOBJ_BODY
        count = model.ngeom if kind == "geom" else model.nbody
        all_names = [mujoco.mj_id2name(model, obj, i) or "" for i in range(count)]
        hits = [
            i
            for i, n in enumerate(all_names)
            if n and fnmatch.fnmatchcase(n, element) and (kind == "geom" or i > 0)
        ]
        if not hits:
            raise ConfigError(
                f"parameter {full!r}: no {kind} named {element!r} in the model (has: {', '.join(n for n in all_names if n) or 'none'})"
            )
        comps = [int(idx)] if idx is not None else list(range(SIZES[attr]))
        for i in hits:
            for c in comps:
                name = f"{kind}:{all_names[i]}.{attr}" + (f"[{c}]" if SIZES[attr] > 1 else "")
                if name not in seen:
                    seen.add(name)
                    out.append(ContactParam(name, kind, all_names[i], attr, c, i))
    return out


def get_value(model, p: ContactParam) -> float:
    i, c = p.obj_id, p.index
    if p.kind == "geom":
        return float(getattr(model, f"geom_{p.attribute}")[i, c])
    if p.attribute == "mass":
        return float(model.body_mass[i])
    if p.attribute in ("ipos", "com"):
        return float(model.body_ipos[i, c])
    return float(model.body_inertia[i, c])


def set_value(model, p: ContactParam, v: float) -> None:
    i, c = p.obj_id, p.index
    if p.kind == "geom":
        getattr(model, f"geom_{p.attribute}")[i, c] = v
    elif p.attribute == "mass":
        model.body_mass[i] = v
    elif p.attribute in ("ipos", "com"):
        model.body_ipos[i, c] = v
        model.body_sameframe[i] = 0
    else:
        model.body_inertia[i, c] = v


def give_priority(model, params: list[ContactParam]) -> None:
    """Fitted geoms above every other geom's contact priority (their values are used as they are)."""
    top = int(np.max(model.geom_priority)) + 1 if model.ngeom else 1
    for p in params:
        if p.kind == "geom":
            model.geom_priority[p.obj_id] = max(top, int(model.geom_priority[p.obj_id]))


def apply(model, params: list[ContactParam], values: np.ndarray) -> None:
    give_priority(model, params)
    for p, v in zip(params, values, strict=True):
        set_value(model, p, float(v))


def to_free(params: list[ContactParam], x: np.ndarray) -> np.ndarray:
    """Values → the unbounded space the optimiser moves in."""
    out = np.array(x, float)
    for k, p in enumerate(params):
        if p.space == "log":
            out[k] = np.log(x[k])
        elif p.space == "logit":
            out[k] = np.log(x[k] / (1.0 - x[k]))
    return out


def from_free(params: list[ContactParam], z: np.ndarray) -> np.ndarray:
    out = np.array(z, float)
    for k, p in enumerate(params):
        if p.space == "log":
            out[k] = np.exp(z[k])
        elif p.space == "logit":
            out[k] = 1.0 / (1.0 + np.exp(-z[k]))
    return out


def dvalue_dfree(params: list[ContactParam], x: np.ndarray) -> np.ndarray:
    """d value / d free coordinate at values ``x`` (for standard errors)."""
    return np.array(
        [
            v if p.space == "log" else v * (1 - v) if p.space == "logit" else 1.0
            for p, v in zip(params, x, strict=True)
        ]
    )
