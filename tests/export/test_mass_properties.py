"""Mass properties in the exported, compiled MJCF against analytic values and trimesh's exact integrals."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from real2sim.export.physics.inertia import inertia_problems, mass_properties


def _body(pkg, name):
    model = mujoco.MjModel.from_xml_path(str(pkg.scene_xml))
    b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)
    assert b >= 0, name
    r = np.zeros(9)
    mujoco.mju_quat2Mat(r, model.body_iquat[b])
    r = r.reshape(3, 3)
    inertia_body = r @ np.diag(model.body_inertia[b]) @ r.T  # body frame, about the COM
    return model, b, float(model.body_mass[b]), model.body_ipos[b].copy(), inertia_body


def test_box_cylinder_sphere_match_analytic(synthetic_package):
    # box 0.10 x 0.16 x 0.05 at 700 kg/m^3
    _, _, m, com, i = _body(synthetic_package, "box")
    a, b, c = 0.10, 0.16, 0.05
    mass = 700 * a * b * c
    assert m == pytest.approx(mass, rel=5e-3)
    assert np.allclose(com, 0, atol=1e-9)
    expect = mass / 12 * np.diag([b**2 + c**2, a**2 + c**2, a**2 + b**2])
    assert np.allclose(np.diag(i), np.diag(expect), rtol=5e-3)
    # cylinder r=0.035 h=0.12 with a given mass of 0.4 kg
    _, _, m, com, i = _body(synthetic_package, "can")
    r, h = 0.035, 0.12
    assert m == pytest.approx(0.4, rel=1e-9)
    expect = np.diag([0.4 * (3 * r**2 + h**2) / 12] * 2 + [0.4 * r**2 / 2])
    assert np.allclose(np.diag(i), np.diag(expect), rtol=5e-3)
    # sphere r=0.04 at 300 kg/m^3
    _, _, m, com, i = _body(synthetic_package, "ball")
    mass = 300 * 4 / 3 * np.pi * 0.04**3
    assert m == pytest.approx(mass, rel=5e-3)
    assert np.allclose(np.diag(i), 0.4 * mass * 0.04**2, rtol=5e-3)


def test_irregular_mesh_matches_exact_mass_properties(synthetic_package, synthetic_scene):
    mesh = synthetic_scene.object("L block").mesh.copy()
    mesh.density = 900.0
    exact = mesh.mass_properties
    _, _, m, com, i = _body(synthetic_package, "L_block")
    assert m == pytest.approx(exact["mass"], rel=1e-2)
    assert np.linalg.norm(com - exact["center_mass"]) < 1e-2 * np.linalg.norm(mesh.extents)
    ref = np.asarray(exact["inertia"])
    assert np.abs(ref[0, 2]) > 1e-3 * np.abs(ref).max()  # the L has a real product of inertia to get right
    assert np.linalg.norm(i - ref) <= 1e-2 * np.linalg.norm(ref)


def test_full_tensor_and_validity_checks(synthetic_scene):
    props = mass_properties(synthetic_scene.object("L block").mesh, "L", density=900.0)
    assert props.inertia.shape == (3, 3) and abs(props.inertia[0, 2]) > 0
    assert inertia_problems(props.inertia) == []
    assert inertia_problems(np.diag([1.0, 1.0, 3.0]))  # violates the triangle inequality
    assert inertia_problems(np.diag([1.0, -1.0, 1.0]))  # not positive definite
