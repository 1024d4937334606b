"""Free bodies in the map: [bodies.NAME] columns, x-y-z-w quaternions, world-frame angular velocity, velocities
estimated from poses, folders read in name order, and unknown keys named with the nearest valid one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from real2sim.calibration.contact.logs import read_motions, rotate_to_body
from real2sim.calibration.maps.logmap import load_map
from real2sim.errors import InputError
from tests.helpers.cube import MAP as CUBE_MAP
from tests.helpers.cube import tosses


def test_unknown_keys_name_the_nearest(tmp_path: Path) -> None:
    m = tmp_path / "map.toml"
    m.write_text(CUBE_MAP.replace("angvel_frame", "angvel_fram"))
    with pytest.raises(InputError, match="'angvel_fram'.*did you mean 'angvel_frame'"):
        load_map(m)
    m.write_text("tme = 't'\n" + CUBE_MAP)
    with pytest.raises(InputError, match="'tme'.*did you mean 'time'"):
        load_map(m)
    m.write_text(CUBE_MAP + "[bodys.x]\npos = ['a','b','c']\n")
    with pytest.raises(InputError, match="did you mean 'bodies'"):
        load_map(m)
    m.write_text(CUBE_MAP.replace('quat = ["qw", "qx", "qy", "qz"]', 'quat = ["qw", "qx", "qy"]'))
    with pytest.raises(InputError, match="quat .* 4 column names"):
        load_map(m)


def _xyzw_npz(src: Path, dest: Path) -> np.ndarray:
    """A toss written x-y-z-w with a world-frame angular velocity and no linear velocity; returns its rows."""
    a = np.genfromtxt(src, delimiter=",", names=True)
    quat = np.stack([a["qw"], a["qx"], a["qy"], a["qz"]], axis=1)
    w_world = _to_world(quat, np.stack([a["wx"], a["wy"], a["wz"]], axis=1))
    names = ["t", "x", "y", "z", "q0", "q1", "q2", "q3", "ox", "oy", "oz"]
    cols = [a["t"], a["x"], a["y"], a["z"], a["qx"], a["qy"], a["qz"], a["qw"], *w_world.T]
    np.savez(dest, **dict(zip(names, cols, strict=True)))
    return a


def test_orders_frames_and_estimated_velocities(shared_data: Path, tmp_path: Path) -> None:
    src = sorted(tosses(shared_data).glob("*.csv"))[:2]
    folder = tmp_path / "logs"
    folder.mkdir()
    a = _xyzw_npz(src[0], folder / "b.npz")
    _xyzw_npz(src[1], folder / "a.npz")
    (folder / "notes.txt").write_text("not a log")
    m = tmp_path / "map.toml"
    m.write_text(
        'time = "t"\n[bodies.cube]\npos = ["x", "y", "z"]\nquat = ["q3", "q0", "q1", "q2"]\n'
        'angvel = ["ox", "oy", "oz"]\nangvel_frame = "world"\n'
    )
    logs = read_motions([folder], load_map(m))
    assert [lg.name for lg in logs] == ["a.npz", "b.npz"]
    b = logs[1]
    quat = np.stack([a["qw"], a["qx"], a["qy"], a["qz"]], axis=1)
    np.testing.assert_allclose(b.pose["cube"][:, 3:], quat, atol=1e-6)
    np.testing.assert_allclose(b.vel["cube"][:, 3:], np.stack([a["wx"], a["wy"], a["wz"]], 1), atol=1e-5)
    lin = np.stack([a["vx"], a["vy"], a["vz"]], axis=1)
    # estimated from positions: close to the logged velocity in flight (first 20 samples)
    assert np.abs(b.vel["cube"][1:20, :3] - lin[1:20]).mean() < 0.05 * np.abs(lin[1:20]).mean()


def test_angular_velocity_from_quaternions(shared_data: Path, tmp_path: Path) -> None:
    src = sorted(tosses(shared_data).glob("*.csv"))[0]
    m = tmp_path / "map.toml"
    m.write_text('time = "t"\n[bodies.cube]\npos = ["x", "y", "z"]\nquat = ["qw", "qx", "qy", "qz"]\n')
    est = read_motions([src], load_map(m))[0].vel["cube"][:, 3:]
    a = np.genfromtxt(src, delimiter=",", names=True)
    logged = np.stack([a["wx"], a["wy"], a["wz"]], axis=1)
    err = np.linalg.norm(est - logged, axis=1)
    assert np.median(err) < 0.1 * np.median(np.linalg.norm(logged, axis=1))


def _to_world(quat: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Inverse of ``rotate_to_body``, checked by it."""
    w, u = quat[:, :1], quat[:, 1:]
    t = 2.0 * np.cross(u, v)
    out = v + w * t + np.cross(u, t)
    np.testing.assert_allclose(rotate_to_body(quat, out), v, atol=1e-5)
    return out


def test_cli_body_not_in_model_is_one_error_line(shared_data: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from real2sim.cli import cli

    src = sorted(tosses(shared_data).glob("*.csv"))[0]
    (tmp_path / "m.xml").write_text(
        '<mujoco><worldbody><geom name="table" type="plane" size="0 0 1"/><body name="box"><freejoint/>'
        '<geom name="g" type="box" size=".05 .05 .05"/></body></worldbody></mujoco>'
    )
    (tmp_path / "map.toml").write_text(CUBE_MAP)
    out = tmp_path / "out"
    args = ["calibrate", str(tmp_path / "m.xml"), "--log", str(src), "--map", str(tmp_path / "map.toml")]
    r = CliRunner().invoke(cli, [*args, "--fit", "geom:g.friction", "-o", str(out)])
    assert r.exit_code != 0
    assert "body 'cube' in the map is not in the model" in r.output
    assert "Traceback" not in r.output and not out.exists()


def test_parameters_resolve_and_write_into_the_mjcf(tmp_path: Path) -> None:
    import mujoco

    from real2sim.calibration.contact.mjcf import calibrated_xml
    from real2sim.calibration.contact.params import resolve_contact
    from real2sim.errors import ConfigError

    xml = tmp_path / "m.xml"
    xml.write_text(
        '<mujoco><worldbody><geom name="table" type="plane" size="0 0 1" priority="2"/><body name="cube">'
        '<freejoint/><geom name="cube_geom" type="box" size=".05 .05 .05" mass="0.37"/></body></worldbody></mujoco>'
    )
    model = mujoco.MjModel.from_xml_path(str(xml))
    ps = resolve_contact(
        ["geom:cube_*.friction[0]", "geom:cube_geom.solimp", "body:cube.mass", "body:cube.inertia"], model
    )
    names = [p.name for p in ps]
    assert names[:2] == ["geom:cube_geom.friction[0]", "geom:cube_geom.solimp[0]"]
    assert len(names) == 1 + 5 + 1 + 3
    with pytest.raises(ConfigError, match="no geom named 'nothing'"):
        resolve_contact(["geom:nothing.friction"], model)
    with pytest.raises(ConfigError, match="3 components"):
        resolve_contact(["geom:cube_geom.friction[3]"], model)
    vals = np.array([0.3, 0.8, 0.9, 0.002, 0.4, 3.0, 0.5, 1e-3, 2e-3, 3e-3])
    out = mujoco.MjModel.from_xml_string(calibrated_xml(xml, ps, vals, np.ones(len(ps), bool)))
    g, b = out.geom("cube_geom").id, out.body("cube").id
    assert out.geom_friction[g, 0] == pytest.approx(0.3)
    np.testing.assert_allclose(out.geom_solimp[g], [0.8, 0.9, 0.002, 0.4, 3.0])
    assert out.geom_priority[g] == 3  # above the table's 2
    assert out.body_mass[b] == pytest.approx(0.5)
    np.testing.assert_allclose(np.sort(out.body_inertia[b]), [1e-3, 2e-3, 3e-3])
    assert out.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL  # no cone asked: the model's (MuJoCo's default)
    ell = mujoco.MjModel.from_xml_string(calibrated_xml(xml, ps, vals, np.ones(len(ps), bool), "elliptic"))
    assert ell.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    assert ell.geom_friction[g, 0] == pytest.approx(0.3)
    from real2sim.calibration.contact.run import set_cone

    assert set_cone(model, "model") is None and model.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL
    assert set_cone(model, "elliptic") == "elliptic" and model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    assert set_cone(model, "elliptic") is None  # already elliptic: nothing to write
