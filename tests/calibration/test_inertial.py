"""Physically consistent inertial parameters: conversions, every internal point physical, exact regressor, and
recovery of link inertias from synthetic inverse dynamics (seeded, noise-free ground truth)."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from real2sim.calibration.fitting.inverse import IdSamples, build_regressor, fit_inverse, regressor_residual
from real2sim.calibration.params.inertial import (
    Reparam,
    is_physical,
    phi_from,
    phi_of,
    principal_moments,
    second_moments,
    set_phi,
)
from real2sim.calibration.params.resolve import apply, get_value, resolve
from real2sim.calibration.sim.simulate import clone
from real2sim.params import ParamSpec

MODEL = Path(__file__).resolve().parents[2] / "calibration" / "models" / "double_pendulum_c0.xml"
JOINTS = ("shoulder", "elbow")
ACTS = ("shoulder_motor", "elbow_motor")


def test_phi_roundtrip_and_pseudo_inertia() -> None:
    rng = np.random.default_rng(0)
    model = mujoco.MjModel.from_xml_path(str(MODEL))
    for _ in range(5):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        sm = rng.uniform(1e-4, 1e-2, 3)
        phi = phi_from(rng.uniform(0.1, 2.0), rng.normal(scale=0.1, size=3), principal_moments(sm), q)
        assert is_physical(phi)
        m = clone(model)
        set_phi(m, 2, phi)
        np.testing.assert_allclose(phi_of(m, 2), phi, rtol=1e-9, atol=1e-12)
    # a rod whose moment about its own axis breaks the triangle inequality is not a rigid body
    bad = phi_from(1.0, np.zeros(3), np.array([1e-3, 1e-3, 3e-3]), np.array([1.0, 0, 0, 0]))
    assert not is_physical(bad)
    np.testing.assert_allclose(principal_moments(second_moments([1.0, 2.0, 2.5])), [1.0, 2.0, 2.5])


def test_reparam_every_point_is_physical() -> None:
    model = mujoco.MjModel.from_xml_path(str(MODEL))
    params = resolve(
        [ParamSpec("body:*.mass"), ParamSpec("body:*.inertia"), ParamSpec("joint:*.damping")], model
    )
    x0 = np.array([get_value(model, p) for p in params])
    rp = Reparam(params, x0)
    assert len(rp.triplets) == 2
    np.testing.assert_allclose(rp.to_values(rp.to_internal(x0)), x0, rtol=1e-12)
    lo, hi = rp.bounds(np.zeros(len(x0)), np.full(len(x0), 10.0))
    rng = np.random.default_rng(1)
    for _ in range(200):
        z = rng.uniform(np.maximum(lo, -30), np.minimum(hi, 30))
        v = rp.to_values(z)
        m = clone(model)
        apply(m, params, np.where([p.attribute == "mass" for p in params], np.abs(v) + 1e-3, v))
        assert all(is_physical(phi_of(m, b)) for b in (1, 2))


def _samples(n: int, seed: int) -> IdSamples:
    rng = np.random.default_rng(seed)
    return IdSamples(
        rng.uniform(-np.pi, np.pi, (n, 2)),
        rng.normal(scale=3.0, size=(n, 2)),
        rng.normal(scale=20.0, size=(n, 2)),
        np.zeros((n, 2)),
        np.zeros(n),
    )


def test_inverse_fit_recovers_link_inertias() -> None:
    """Torques from a 'true' model with heavier, shifted links; the fit starts from the nominal model and must
    reproduce the true torques, through physical iterates, with the identifiable quantities recovered."""
    from real2sim.calibration.fitting.inverse import joint_torques

    nominal = mujoco.MjModel.from_xml_path(str(MODEL))
    true = clone(nominal)
    true.body_mass[2] = 0.9
    true.body_ipos[2] = [0.0, 0.0, -0.25]
    true.body_inertia[2] = [0.004, 0.004, 0.0002]
    true.dof_damping[:] = [0.02, 0.01]
    s = _samples(400, 2)
    tau, _ = joint_torques(true, s, JOINTS, ())
    s = IdSamples(s.q, s.qd, s.qdd, tau, s.log)  # the "logged" ctrl is the true torque (gear 1 motors)
    params = resolve(
        [
            ParamSpec("joint:*.damping"),
            ParamSpec("body:link2.mass"),
            ParamSpec("body:link2.com"),
            ParamSpec("body:link2.inertia"),
        ],
        nominal,
    )
    x0 = np.array([get_value(nominal, p) for p in params])
    lower = np.array([0.0, 0.0, 0.05, -0.5, -0.5, -0.8, 1e-6, 1e-6, 1e-6])
    upper = np.array([1.0, 1.0, 5.0, 0.5, 0.5, 0.2, 1.0, 1.0, 1.0])
    reg = build_regressor(nominal, params, x0, s, JOINTS, ACTS)
    # the affine regressor is exact: it matches mj_inverse at a different parameter point
    probe = x0 * 1.1
    m = clone(nominal)
    apply(m, params, probe)
    pred, appl = joint_torques(m, s, JOINTS, ACTS)
    np.testing.assert_allclose(regressor_residual(reg, params, x0, probe), (pred - appl).T.ravel(), atol=1e-7)
    values, out = fit_inverse(nominal, params, x0, lower, upper, s, JOINTS, ACTS, reg=reg)
    assert out.cost_final < 1e-10 * out.cost_initial
    got = {p.name: v for p, v in zip(params, values, strict=True)}
    np.testing.assert_allclose(
        [got["joint:shoulder.damping"], got["joint:elbow.damping"]], [0.02, 0.01], atol=1e-6
    )
    fitted = clone(nominal)
    apply(fitted, params, values)
    assert is_physical(phi_of(fitted, 2))
    # planar pendulum: mass·com along the link and the moment about the joint axis are identifiable
    phi_t, phi_f = phi_of(true, 2), phi_of(fitted, 2)
    np.testing.assert_allclose(phi_f[3], phi_t[3], rtol=1e-6)  # m·c_z
    np.testing.assert_allclose(phi_f[5], phi_t[5], rtol=1e-6)  # I_yy about the elbow


def test_com_change_takes_effect_on_sameframe_body() -> None:
    """A body compiled with its inertial frame at the body frame: MuJoCo skips ipos at run time unless told."""
    from real2sim.calibration.fitting.inverse import joint_torques

    xml = """<mujoco><worldbody><body name="b" pos="0 0 1"><joint name="j" type="hinge" axis="0 1 0"/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/></body></worldbody>
      <actuator><motor name="a" joint="j"/></actuator></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    assert model.body_sameframe[1] == 1
    params = resolve([ParamSpec("body:b.com")], model)
    s = IdSamples(np.array([[0.5]]), np.zeros((1, 1)), np.zeros((1, 1)), np.zeros((1, 1)), np.zeros(1))
    m = clone(model)
    apply(m, params, np.array([0.0, 0.0, -0.2]))
    tau, _ = joint_torques(m, s, ("j",), ())
    np.testing.assert_allclose(tau[0, 0], 1.0 * 9.81 * 0.2 * np.sin(0.5), rtol=1e-9)  # m g r sin q


def test_trajectory_fit_of_link_inertia(tmp_path: Path) -> None:
    """Trajectory matching of the forearm's mass and principal moments (noise-free sample robot logs) through the
    physically consistent coordinates: starting 3x off (and isotropic), the moment about the elbow axis and the
    mass come back within 1 %; the moments the planar motion cannot see stay a physical body."""
    from real2sim.calibration.run import CalibrateCfg, build_problem, fit_problem
    from real2sim.samplegen.robot import write_robot

    gt = write_robot(tmp_path / "s", seed=0, noise=False)
    s = tmp_path / "s"
    cfg = CalibrateCfg(
        model=s / gt["model"],
        logs=(s / "logs/excite_00.csv",),
        map=s / "logs/map.toml",
        fit=("delay:*",),
        specs=(
            ParamSpec("body:forearm.mass", 0.05, 5.0, initial=1.8),
            ParamSpec("body:forearm.inertia", initial=0.0096),
        ),
        max_windows=24,
        max_nfev=25,
    )
    prob = build_problem(cfg)
    x, out, obj = fit_problem(prob, cfg)
    obj.sim.close()
    got = {p.name: v for p, v in zip(prob.params, x, strict=True)}
    assert out.cost_final < 1e-3 * out.cost_initial
    assert abs(got["body:forearm.mass"] / 0.6 - 1) < 0.01, got
    assert abs(got["body:forearm.inertia[1]"] / 0.0032 - 1) < 0.01, got
    i = np.array([got[f"body:forearm.inertia[{k}]"] for k in range(3)])
    assert np.all(i > 0) and np.all(second_moments(i) > 0), i


def test_robust_inverse_fit_shrugs_off_torque_spikes() -> None:
    """Logged motor torques carry impulsive spikes (the DFKI swing-ups show ±4 N·m ones): with 3 % of samples
    spiked, plain least squares misses the true damping and mass, the default Cauchy IRLS fit does not."""
    from real2sim.calibration.fitting.inverse import joint_torques

    nominal = mujoco.MjModel.from_xml_path(str(MODEL))
    true = clone(nominal)
    true.body_mass[2] = 0.8
    true.dof_damping[:] = [0.02, 0.01]
    rng = np.random.default_rng(7)
    s = _samples(2000, 3)
    tau, _ = joint_torques(true, s, JOINTS, ())
    tau = tau + rng.normal(scale=0.02, size=tau.shape)
    spikes = rng.random(tau.shape) < 0.03
    # spikes that come with fast motion (the part that biases friction): signed like the velocity
    tau[spikes] += 3.0 * np.sign(s.qd[spikes])
    s = IdSamples(s.q, s.qd, s.qdd, tau, s.log)
    params = resolve([ParamSpec("joint:*.damping"), ParamSpec("body:link2.mass")], nominal)
    x0 = np.array([get_value(nominal, p) for p in params])
    lower, upper = np.array([0.0, 0.0, 0.05]), np.array([1.0, 1.0, 5.0])
    truth = np.array([0.02, 0.01, 0.8])
    errs = {}
    for robust in (False, True):
        values, _ = fit_inverse(nominal, params, x0, lower, upper, s, JOINTS, ACTS, robust=robust)
        errs[robust] = np.abs(values - truth) / truth
    assert np.max(errs[True]) < 0.05, errs
    assert np.max(errs[False]) > 4 * np.max(errs[True]), errs
