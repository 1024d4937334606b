"""Newton (on the CPU, through warp) imports the USD with MuJoCo's bodies and masses; each dynamic body, released
``LIFT`` above its resting pose, comes back to it within ``MAX_REST_ERROR`` in ``SETTLE_SECONDS``."""

# newton declares the Model's and State's arrays and the solver config's parts Optional (finalize(), state() and
# from_model() fill them), so each model.body_mass / state.body_q here would need a None check the API rules out:
# pyright: reportOptionalMemberAccess=false

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.export.checks.reference import (
    LIFT,
    MASS_RTOL,
    MAX_REST_ERROR,
    SETTLE_SECONDS,
    Body,
    EngineInputs,
    rel_error,
)
from real2sim.results import Check

HZ = 240
"""Newton time steps per simulated second."""


def _world_com(body_q: np.ndarray, com: np.ndarray) -> np.ndarray:
    """Centres of mass in the world of bodies at ``body_q`` (x, y, z, qx, qy, qz, qw)."""
    from scipy.spatial.transform import Rotation

    return Rotation.from_quat(body_q[:, 3:]).apply(com) + body_q[:, :3]


def newton_checks(usd: Path, bodies: list[Body]) -> list[Check]:
    """``_newton_checks`` with warp's messages (kernel builds, module loads) kept off stdout."""
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        return _newton_checks(usd, bodies)


def _newton_checks(usd: Path, bodies: list[Body]) -> list[Check]:
    """Import with ``ModelBuilder.add_usd``, step with Kamino (Newton's complementarity solver for rigid bodies:
    XPBD lets resting hulls creep by a few mm/s)."""
    from real2sim.stdio import native_output_silenced

    with native_output_silenced():  # warp's CUDA-driver warning on a machine without a GPU
        import warp as wp

        wp.config.log_level = wp.LOG_WARNING  # no module-load timings (warp 1.19 has no config.quiet)
        wp.init()
        import newton

    builder = newton.ModelBuilder()
    newton.solvers.SolverKamino.register_custom_attributes(builder)
    try:
        builder.add_usd(str(usd), load_visual_shapes=False)
    except Exception as exc:  # the importer raises whatever it meets
        return [Check("newton imports usd", False, f"{exc.__class__.__name__}: {exc}")]
    model = builder.finalize(device="cpu")
    # newton before 1.x called the labels body_key
    labels = getattr(builder, "body_label", None) or builder.body_key  # pyright: ignore[reportAttributeAccessIssue]
    index = {str(k).rsplit("/", 1)[-1]: i for i, k in enumerate(labels)}
    dynamic = [b for b in bodies if b.dynamic]
    masses = model.body_mass.numpy()
    found = [b for b in dynamic if b.name in index]
    err = max([rel_error(masses[index[b.name]], b.mass) for b in found], default=0.0)
    ok = len(found) == len(dynamic) == model.body_count and err <= MASS_RTOL
    checks = [
        Check(
            "newton imports usd",
            ok,
            f"{model.body_count} bodies (MJCF {len(dynamic)} dynamic), {model.shape_count} shapes, masses within "
            f"{err:.1g} of the MJCF's",
            err,
            MASS_RTOL,
        )
    ]
    if not ok:
        return checks
    cfg = newton.solvers.SolverKamino.Config.from_model(  # newton annotates **kwargs as dict[str, Any] (each value)
        model,
        dynamics_solver="dvi",  # pyright: ignore[reportArgumentType]
        sparse_dynamics=True,  # pyright: ignore[reportArgumentType]
        sparse_jacobian=True,  # pyright: ignore[reportArgumentType]
    )
    cfg.dynamics.cull_speculative_contacts = False
    solver = newton.solvers.SolverKamino(model, config=cfg)
    pipe = newton.CollisionPipeline(model, speculative_contact_gap_max=0.1)
    contacts = pipe.contacts()
    s0, s1, control = model.state(), model.state(), model.control()
    q = s0.body_q.numpy().copy()
    q[:, 2] += LIFT
    s0.body_q.assign(q)
    dt = 1.0 / HZ
    for _ in range(int(round(SETTLE_SECONDS * HZ))):
        s0.clear_forces()
        pipe.collide(s0, contacts, dt=dt)
        solver.step(s0, s1, control, contacts, dt)
        s0, s1 = s1, s0
    com = _world_com(s0.body_q.numpy().astype(np.float64), model.body_com.numpy().astype(np.float64))
    for b in dynamic:
        d = float(np.linalg.norm(com[index[b.name]] - b.world_com))
        checks.append(
            Check(
                f"newton rest {b.label}",
                d < MAX_REST_ERROR,
                f"{d * 1e3:.2f} mm from MuJoCo's rest after a {LIFT * 1e3:g} mm drop, {SETTLE_SECONDS:g} s",
                d,
                MAX_REST_ERROR,
            )
        )
    return checks


def run(inp: EngineInputs) -> list[Check]:
    """This engine's checks of a package (the entry point ``engines.ENGINES`` calls)."""
    return newton_checks(inp.usd, inp.bodies)
