"""Several setups in one fit: each log may have its own model file (another payload or arm), a scale on the
position gain (a servo's firmware gain, e.g. ``kp`` from the log header relative to a reference) and fixed
per-log parameter values. Shared parameters are applied to every setup's model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from real2sim.calibration.params.resolve import apply, resolve
from real2sim.calibration.params.resolved import Resolved
from real2sim.calibration.sim.simulate import clone
from real2sim.errors import ConfigError
from real2sim.params import ParamSpec
from real2sim.trajectory import Trajectory

if TYPE_CHECKING:
    import mujoco


@dataclass(frozen=True)
class Setup:
    """One log's setup. ``model``: its own MjModel (None: the shared one); ``gain_scale`` multiplies the position
    gain (gainprm[0] and biasprm[1]) of ``actuators``; ``overrides``: parameter name → value for this log."""

    model: mujoco.MjModel | None = None
    gain_scale: float = 1.0
    actuators: tuple[str, ...] = ()
    overrides: dict[str, float] = field(default_factory=dict)


def gain_setups(
    trajs: list[Trajectory], constant: str, reference: float | None = None, models: list | None = None
) -> list[Setup]:
    """Setups whose position gain scales with a per-log constant (e.g. firmware ``kp``) over ``reference``
    (default: the first log's value); ``models``: each log's own model, or None."""
    for tr in trajs:
        if constant not in tr.constants:
            raise ConfigError(
                f"gain constant {constant!r} is not a constant of log {tr.source} "
                f"(has: {', '.join(tr.constants) or 'none'}; list it in the map's constants = [...])"
            )
    ref = float(reference if reference is not None else trajs[0].constants[constant])
    return [
        Setup(
            model=None if models is None else models[k],
            gain_scale=float(tr.constants[constant]) / ref,
            actuators=tr.actuator_names,
        )
        for k, tr in enumerate(trajs)
    ]


class SetupModels:
    """Builds each log's candidate model from shared parameter values."""

    def __init__(self, base, params: list[Resolved], setups: list[Setup]):
        self.base = base
        self.setups = setups
        self.names = [p.name for p in params]
        self._resolved: dict[int, list[Resolved]] = {}
        self._resolved[id(base)] = params
        self._keep = [base, *(s.model for s in setups if s.model is not None)]

    def _params_for(self, model) -> list[Resolved]:
        key = id(model)
        if key not in self._resolved:
            by_name = {p.name: p for p in resolve([p.spec for p in self._resolved[id(self.base)]], model)}
            self._resolved[key] = [by_name[n] for n in self.names]
        return self._resolved[key]

    def models(self, params: list[Resolved], values: np.ndarray) -> list:
        """One model per log: the setup's model with ``values`` (for ``params``) applied, then its overrides and
        gain scale."""
        import mujoco

        idx = [self.names.index(p.name) for p in params]
        out, cache = [], {}
        for s in self.setups:
            src = s.model if s.model is not None else self.base
            key = (id(src), s.gain_scale, tuple(sorted(s.overrides.items())), s.actuators)
            if key in cache:
                out.append(cache[key])
                continue
            m = clone(src)
            mine = self._params_for(src)
            apply(m, [mine[i] for i in idx], np.asarray(values, float))
            if s.overrides:
                over = {p.name: p for p in resolve([ParamSpec(n) for n in s.overrides], m)}
                apply(m, [over[n] for n in s.overrides], np.array(list(s.overrides.values()), float))
            for a in s.actuators:
                i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, a)
                m.actuator_gainprm[i, 0] *= s.gain_scale
                m.actuator_biasprm[i, 1] *= s.gain_scale
            cache[key] = m
            out.append(m)
        return out


def log_setups(prob, trajs: list[Trajectory], cfg, load_model) -> SetupModels:
    """The setups a ``CalibrateCfg`` asks for: per-log model files (``log_models``, in the order logs then held-out
    logs) and position gains scaled by ``gain_constant`` over ``gain_reference``."""
    from pathlib import Path

    paths = [str(p) for p in (*cfg.logs, *cfg.holdout)]
    files = dict(zip(paths, cfg.log_models, strict=False))
    loaded = {f: load_model(Path(f)) for f in dict.fromkeys(files.values())}
    models = [loaded[files[tr.source]] if tr.source in files else None for tr in trajs]
    if cfg.gain_constant:
        ref = cfg.gain_reference or prob.train[0].constants.get(cfg.gain_constant)
        setups = gain_setups(trajs, cfg.gain_constant, ref, models)
    else:
        setups = [Setup(model=m) for m in models]
    return SetupModels(prob.model, prob.params, setups)
