"""The peer of the calibration benchmarks: plain ``mujoco.sysid`` on the same windows and parameters as ours."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np


def sysid_fit(
    model_path: Path, params, x0, lower, upper, obj, max_iters: int, name: str = "bench"
) -> tuple[np.ndarray, float]:
    """Plain mujoco.sysid: one measured sequence per window of ``obj`` (our window objective), joint-position
    sensors, parameters applied through MjSpec modifiers. Returns (fitted values, optimiser wall time [s])."""
    import mujoco
    from mujoco import sysid

    from real2sim.calibration.outputs.writeback import set_spec_value

    win = obj.sim.win
    spec = mujoco.MjSpec.from_file(str(model_path))
    joints, acts = win.trajs[0].joint_names, win.trajs[0].actuator_names
    for j in joints:
        spec.add_sensor(
            name=f"{j}_pos",
            type=mujoco.mjtSensor.mjSENS_JOINTPOS,
            objtype=mujoco.mjtObj.mjOBJ_JOINT,
            objname=j,
        )
    model = spec.compile()
    pd = sysid.ParameterDict()
    for p, v, lo, hi in zip(params, x0, lower, upper, strict=True):

        def modify(s, par, p=p):
            set_spec_value(s, p, float(par.value[0]))

        pd.add(
            sysid.Parameter(
                p.name, nominal=float(v), min_value=float(lo), max_value=float(hi), modifier=modify
            )
        )
    names, x0s, ctrls, sensors = [], [], [], []
    aid = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a) for a in acts]
    for w, (k, s) in enumerate(zip(win.log_index, win.start, strict=True)):
        tr = win.trajs[k]
        sl = slice(s, s + win.length)
        u = np.zeros((win.length, model.nu))
        u[:, aid] = tr.ctrl[sl]
        t = tr.time[sl] - tr.time[s]
        names.append(f"w{w}")
        x0s.append(obj.sim.x0[w])
        ctrls.append(sysid.TimeSeries(t, u))
        sensors.append(sysid.TimeSeries.from_names(t, tr.qpos[sl], model, [f"{j}_pos" for j in joints]))
    fn = sysid.build_residual_fn(
        models_sequences=[sysid.ModelSequences(name, spec, names, x0s, ctrls, sensors)]
    )
    t0 = time.perf_counter()
    opt, _ = sysid.optimize(
        initial_params=pd, residual_fn=fn, optimizer="mujoco", verbose=False, max_iters=max_iters
    )
    return np.array([float(opt[p.name].value[0]) for p in params]), time.perf_counter() - t0
