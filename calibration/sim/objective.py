"""The trajectory-matching residual: weighted qpos/qvel errors of all multiple-shooting windows."""

from __future__ import annotations

import numpy as np

from real2sim.calibration.params.resolve import apply
from real2sim.calibration.params.resolved import Resolved
from real2sim.calibration.sim.simulate import Simulator, clone
from real2sim.errors import ConfigError


class WindowObjective:
    """Residual (C, M) for C candidate value vectors; residual units: rad (qvel scaled by ``qvel_weight`` s)."""

    def __init__(
        self,
        sim: Simulator,
        params: list[Resolved],
        actuator_names: tuple[str, ...],
        base_delays: np.ndarray | None = None,
        qpos_weight: float = 1.0,
        qvel_weight: float = 0.05,
        setups=None,
    ):
        self.sim = sim
        self.setups = setups  # SetupModels: one model per log, or None
        self.params = params
        self.model_params = [i for i, p in enumerate(params) if p.kind != "delay"]
        self.delay_idx = []
        for i, p in enumerate(params):
            if p.kind == "delay":
                if p.element not in actuator_names:
                    raise ConfigError(
                        f"{p.name}: actuator {p.element!r} has no logged ctrl column in the map"
                    )
                self.delay_idx.append((i, actuator_names.index(p.element)))
        self.base_delays = (
            np.zeros(len(actuator_names)) if base_delays is None else np.asarray(base_delays, float)
        )
        self.wq = qpos_weight
        self.wv = qvel_weight
        self.n_eval = 0

    def candidate(self, values: np.ndarray):
        mp = [self.params[i] for i in self.model_params]
        if self.setups is not None:
            m = self.setups.models(mp, values[self.model_params])
        else:
            m = clone(self.sim.model)
            apply(m, mp, values[self.model_params])
        d = self.base_delays.copy()
        for i, a in self.delay_idx:
            d[a] = values[i]
        return m, d

    def predict(self, batch: np.ndarray):
        cands = [self.candidate(v) for v in np.atleast_2d(batch)]
        self.n_eval += len(cands)
        return self.sim.predict([c[0] for c in cands], [c[1] for c in cands])

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        qp, qv = self.predict(batch)
        rq = (qp - self.sim.meas_q[None]) * self.wq
        rv = (qv - self.sim.meas_v[None]) * self.wv
        C = qp.shape[0]
        r = np.concatenate([rq.reshape(C, -1), rv.reshape(C, -1)], axis=1)
        return np.nan_to_num(r, nan=1e3, posinf=1e3, neginf=-1e3)

    def window_rmse(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-window joint-angle RMSE [rad] and velocity RMSE [rad/s] (over joints and samples)."""
        qp, qv = self.predict(values[None])
        eq = np.sqrt(np.mean((qp[0] - self.sim.meas_q) ** 2, axis=(1, 2)))
        ev = np.sqrt(np.mean((qv[0] - self.sim.meas_v) ** 2, axis=(1, 2)))
        return eq, ev
