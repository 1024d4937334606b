"""The calibrated MJCF of a contact fit: fitted geoms carry their values and a contact priority above every other
geom, so MuJoCo uses them as they are whatever the support's own friction, solref and solimp."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.calibration.contact.params import ContactParam


def calibrated_spec(
    model_path: Path,
    params: list[ContactParam],
    values: np.ndarray,
    keep: np.ndarray,
    cone: str | None = None,
):
    """``MjSpec`` of the model with the values whose ``keep`` is true written in (and the friction cone ``cone``)."""
    import mujoco

    spec = mujoco.MjSpec.from_file(str(model_path))
    if cone == "elliptic":
        spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    compiled = spec.compile()
    top = max((int(g.priority) for g in spec.geoms), default=0) + 1
    for p, v, k in zip(params, values, keep, strict=True):
        if not k:
            continue
        if p.kind == "geom":
            g = spec.geom(p.element)
            arr = np.array(getattr(g, p.attribute), float)
            arr[p.index] = v
            setattr(g, p.attribute, arr)
            g.priority = max(top, int(g.priority))
        else:
            b = spec.body(p.element)
            if (
                not b.explicitinertial
            ):  # inferred from geoms: make the compiled inertial explicit, then edit it
                bid = compiled.body(p.element).id
                b.explicitinertial = True
                b.mass = float(compiled.body_mass[bid])
                b.ipos = np.array(compiled.body_ipos[bid], float)
                b.iquat = np.array(compiled.body_iquat[bid], float)
                b.inertia = np.array(compiled.body_inertia[bid], float)
                b.fullinertia = [np.nan] * 6
            if p.attribute == "mass":
                b.mass = float(v)
            elif p.attribute in ("ipos", "com"):
                ipos = np.array(b.ipos, float)
                ipos[p.index] = v
                b.ipos = ipos
            else:
                full = np.asarray(b.fullinertia, float)
                if full.size and np.isfinite(full[0]) and np.any(full[:3] != 0):
                    b.fullinertia = [np.nan] * 6
                inertia = np.array(b.inertia, float)
                inertia[p.index] = v
                b.inertia = inertia
    return spec


def calibrated_xml(
    model_path: Path,
    params: list[ContactParam],
    values: np.ndarray,
    keep: np.ndarray,
    cone: str | None = None,
) -> str:
    spec = calibrated_spec(model_path, params, values, keep, cone)
    spec.compile()
    return spec.to_xml()
