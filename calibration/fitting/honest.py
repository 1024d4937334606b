"""Honest results: parameters the data cannot identify keep their prior (refitting the others without them), and
loud warnings when the calibration cannot work (no actuator forced) or made the model worse."""

from __future__ import annotations

import numpy as np

REL_STDERR_MAX = 10.0
"""A standard error above this multiple of the parameter's magnitude (or infinite) means 'not identifiable'."""


def unidentifiable(values: np.ndarray, x0: np.ndarray, stderr: np.ndarray, lower, upper) -> np.ndarray:
    """Indices whose standard error is infinite/NaN or over ``REL_STDERR_MAX`` × max(|value|, |initial|), with
    the bound width standing in for the magnitude of parameters whose value and prior are both 0."""
    width = np.where(np.isfinite(upper - lower), np.asarray(upper) - np.asarray(lower), 1.0)
    mag = np.maximum(np.abs(values), np.abs(x0))
    mag = np.where(mag > 0, mag, 1e-3 * width)
    bad = ~np.isfinite(stderr) | (stderr > REL_STDERR_MAX * mag)
    return np.nonzero(bad)[0]


def refit_fixed(prob, cfg, obj, fixed: np.ndarray):
    """Fit again with the parameters in ``fixed`` held at their initial values. Returns (values, fit output of
    the free parameters, free indices); the output is None when nothing is left to fit."""
    from real2sim.calibration.fitting.inverse import fit_inverse, id_samples
    from real2sim.calibration.params.inertial import fit_physical
    from real2sim.calibration.params.resolve import apply
    from real2sim.calibration.sim.simulate import clone

    n = len(prob.params)
    free = np.array([i for i in range(n) if i not in set(fixed.tolist())], int)
    values = prob.x0.copy()
    if free.size == 0:
        return values, None, free
    sub = [prob.params[i] for i in free]
    if cfg.method == "inverse":
        model = clone(prob.model)
        keep = [i for i in fixed if prob.params[i].kind != "delay"]
        apply(model, [prob.params[i] for i in keep], prob.x0[keep])
        tr = prob.train
        s = id_samples(tr, wn=cfg.velocity_filter_wn, max_samples=4000)
        idx = np.array([i for i in free if prob.params[i].kind != "delay"], int)
        if idx.size == 0:
            return values, None, idx
        x, out = fit_inverse(
            model,
            [prob.params[i] for i in idx],
            prob.x0[idx],
            prob.lower[idx],
            prob.upper[idx],
            s,
            tr[0].joint_names,
            tr[0].actuator_names,
            prior_weight=cfg.prior_weight,
            log_mask=prob.log_mask[idx],
        )
        values[idx] = x
        return values, out, idx

    def f(batch: np.ndarray) -> np.ndarray:
        batch = np.atleast_2d(batch)
        full = np.repeat(prob.x0[None], batch.shape[0], axis=0)
        full[:, free] = batch
        return obj(full)

    out = fit_physical(
        f, sub, prob.x0[free], prob.lower[free], prob.upper[free], prob.log_mask[free], max_nfev=cfg.max_nfev
    )
    values[free] = out.values
    return values, out, free


def unforced_warning(model, trajs) -> str | None:
    """The map leaves the model unforced: no logged ctrl reaches any actuator."""
    acts = trajs[0].actuator_names if trajs else ()
    if acts and model.nu > 0:
        return None
    return (
        "the map gives no actuator a ctrl column"
        + (" and the model has no actuators" if model.nu == 0 else "")
        + ": every window is simulated unforced (passive dynamics only), so torques, gains and delays "
        "cannot be fitted; map the commanded torque or goal position to the actuators ([actuators.NAME] ctrl)"
    )


def worse_warnings(cost0: float, cost1: float, method: str, logs) -> list[str]:
    """The fit made the training cost or the held-out error worse than the initial model."""
    out = []
    if cost1 > cost0 * (1 + 1e-9):
        why = (
            " (--method inverse minimises the torque error, not the trajectory error: try inverse+windows)"
            if method == "inverse"
            else ""
        )
        out.append(
            f"the calibrated model is WORSE than the initial one on the training windows: cost "
            f"{cost0:.6g} -> {cost1:.6g}{why}"
        )
    held = [le for le in logs if le.split == "holdout"]
    if held:
        before = float(np.sqrt(np.mean([le.rmse_qpos_initial**2 for le in held])))
        after = float(np.sqrt(np.mean([le.rmse_qpos**2 for le in held])))
        worse = [le.file for le in held if le.rmse_qpos > le.rmse_qpos_initial * (1 + 1e-9)]
        if after > before * (1 + 1e-9):
            out.append(
                f"held-out joint-angle RMSE got WORSE with calibration: {before:.4g} -> {after:.4g} rad "
                f"(worse on {', '.join(worse)}): the fit does not generalise; keep the initial model or "
                "fit fewer parameters"
            )
        elif worse:
            out.append(f"held-out joint-angle RMSE got worse on {', '.join(worse)}")
    return out
