"""What calibration fits: ``ParamSpec`` names a model element's property, with bounds and scaling."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal, cast, get_args

from real2sim.errors import ConfigError

Kind = Literal["joint", "body", "actuator", "geom", "delay"]
"""What a parameter belongs to: a joint, a body, an actuator, a geom, or an actuator's control delay."""
KINDS: tuple[Kind, ...] = get_args(Kind)

# kind:element.attribute  (delay has no attribute: delay:actuator_name)
_PARAM_RE = re.compile(rf"^({'|'.join(KINDS)}):([^.\s]+)(?:\.([a-z_]+))?$")
ATTRIBUTES: dict[Kind, tuple[str | None, ...]] = {
    "joint": ("damping", "frictionloss", "armature", "stiffness"),
    "body": ("mass", "com", "inertia"),
    "actuator": ("gain", "bias", "kp", "kv", "forcerange"),
    "geom": ("friction",),
    "delay": (None,),
}


@dataclass(frozen=True)
class ParamSpec:
    """One fitted quantity, e.g. ``joint:elbow.damping`` [N·m·s/rad], ``delay:shoulder_motor`` [s].

    ``initial`` is the prior / starting value (None: read from the model); ``lower``/``upper`` bound it;
    ``log_scale`` fits log(value) (for strictly positive, scale-free quantities).
    """

    name: str
    lower: float = -math.inf
    upper: float = math.inf
    initial: float | None = None
    log_scale: bool = False

    @property
    def kind(self) -> Kind:
        return parse_param_name(self.name)[0]

    @property
    def element(self) -> str:
        return parse_param_name(self.name)[1]

    @property
    def attribute(self) -> str | None:
        return parse_param_name(self.name)[2]

    def validate(self) -> None:
        parse_param_name(self.name)
        if not self.lower <= self.upper:
            raise ConfigError(f"{self.name}: lower bound {self.lower} above upper bound {self.upper}")
        if self.log_scale and self.lower <= 0:
            raise ConfigError(f"{self.name}: log-scaled parameters need a positive lower bound")
        if self.initial is not None and not self.lower <= self.initial <= self.upper:
            raise ConfigError(
                f"{self.name}: initial value {self.initial} outside [{self.lower}, {self.upper}]"
            )


def parse_param_name(name: str) -> tuple[Kind, str, str | None]:
    """Split ``kind:element.attribute``; the element may contain ``*`` wildcards."""
    m = _PARAM_RE.match(name)
    if not m:
        raise ConfigError(
            f"parameter {name!r} is not of the form kind:element.attribute "
            f"(kinds: {', '.join(KINDS)}; e.g. joint:elbow.damping, delay:elbow_motor)"
        )
    kind = cast(Kind, m.group(1))  # _PARAM_RE matches only the KINDS names
    element, attr = m.group(2), m.group(3)
    allowed = ATTRIBUTES[kind]
    if attr not in allowed:
        raise ConfigError(
            f"parameter {name!r}: {kind} has attributes {', '.join(a for a in allowed if a) or '(none)'}"
        )
    return kind, element, attr
