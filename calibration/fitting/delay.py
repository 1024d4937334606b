"""Control-delay estimate by cross-correlation: the lag that best aligns the applied ctrl with the torque the
model needs for the measured motion (inverse dynamics); refined later as a fitted parameter."""

from __future__ import annotations

import numpy as np

from real2sim.calibration.fitting.inverse import id_samples, joint_torques
from real2sim.trajectory import Trajectory


def estimate_delays(model, trajs: list[Trajectory], max_delay: float = 0.1, wn: float = 0.1) -> np.ndarray:
    """Per-actuator delay [s] ≥ 0 maximising the correlation between the (delayed) ctrl-applied torque and the
    inverse-dynamics torque, found on a grid of the log's sample period then refined by a parabola."""
    import mujoco

    joints = trajs[0].joint_names
    acts = trajs[0].actuator_names
    out = np.zeros(len(acts))
    s = id_samples(trajs, wn=wn)
    pred, _ = joint_torques(model, s, joints, acts)
    dt = trajs[0].dt
    lags = np.arange(0, int(max_delay / dt) + 1)
    for a, name in enumerate(acts):
        aid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, name)
        j = joints.index(
            mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, int(model.actuator_trnid[aid, 0]))
        )
        scores = []
        for lag in lags:
            num = den1 = den2 = 0.0
            for k, tr in enumerate(trajs):
                sel = s.log == k
                y = pred[sel, j][lag:]
                assert tr.ctrl is not None  # id_samples stacked each log's ctrl, so every log has one
                u = tr.ctrl[: tr.n - lag, a]
                if tr.enable is not None:  # only while the actuator is powered
                    on = tr.enable[: tr.n - lag, a]
                    y, u = y[on], u[on]
                y = y - y.mean()
                u = u - u.mean()
                num += float(y @ u)
                den1 += float(y @ y)
                den2 += float(u @ u)
            scores.append(num / np.sqrt(max(den1 * den2, 1e-300)))
        scores = np.asarray(scores)
        i = int(np.argmax(scores))
        frac = 0.0
        if 0 < i < len(scores) - 1:
            c0, c1, c2 = scores[i - 1], scores[i], scores[i + 1]
            den = c0 - 2 * c1 + c2
            frac = 0.5 * (c0 - c2) / den if den < 0 else 0.0
        out[a] = max(0.0, (i + frac) * dt)
    return out
