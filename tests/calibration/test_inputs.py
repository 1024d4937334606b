"""Bad inputs: one clear error naming the column / joint / parameter; unidentifiable sets named."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from real2sim.calibration.fitting.least_squares import uncertainty
from real2sim.calibration.logs.signal import butter_filtfilt, differentiate, held_shifted_mean
from real2sim.calibration.maps.logmap import load_map, load_trajectory
from real2sim.errors import ConfigError, InputError
from real2sim.samplegen.robot import write_robot


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("robot")
    write_robot(d, seed=1, noise=False)
    return d


def _edit(src: Path, dst: Path, fn) -> Path:
    lines = src.read_text().splitlines()
    dst.write_text("\n".join(fn(lines)) + "\n")
    return dst


def test_loads_trajectory(session: Path) -> None:
    tr, notes = load_trajectory(session / "logs/excite_00.csv", load_map(session / "logs/map.toml"))
    assert tr.joint_names == ("shoulder", "elbow")
    assert tr.qpos.shape == (tr.n, 2) and tr.ctrl.shape == (tr.n, 2)
    assert notes == []


def test_missing_column(session: Path, tmp_path: Path) -> None:
    bad = _edit(
        session / "logs/excite_00.csv",
        tmp_path / "bad.csv",
        lambda ls: [ls[0].replace("q_elbow", "q_elbw")] + ls[1:],
    )
    with pytest.raises(InputError, match="q_elbow"):
        load_trajectory(bad, load_map(session / "logs/map.toml"))


def test_nan_named(session: Path, tmp_path: Path) -> None:
    def put_nan(ls):
        row = ls[10].split(",")
        row[3] = "nan"
        return ls[:10] + [",".join(row)] + ls[11:]

    bad = _edit(session / "logs/excite_00.csv", tmp_path / "nan.csv", put_nan)
    with pytest.raises(InputError, match="qd_shoulder.*NaN"):
        load_trajectory(bad, load_map(session / "logs/map.toml"))


def test_time_backwards(session: Path, tmp_path: Path) -> None:
    bad = _edit(
        session / "logs/excite_00.csv", tmp_path / "back.csv", lambda ls: ls[:5] + [ls[6], ls[5]] + ls[7:]
    )
    with pytest.raises(InputError, match="backwards"):
        load_trajectory(bad, load_map(session / "logs/map.toml"))


def test_unknown_joint(session: Path, tmp_path: Path) -> None:
    import mujoco

    m = tmp_path / "map.toml"
    m.write_text((session / "logs/map.toml").read_text().replace("[joints.elbow]", "[joints.wrist]"))
    model = mujoco.MjModel.from_xml_path(str(session / "robot/double_pendulum.xml"))
    with pytest.raises(InputError, match="wrist"):
        load_trajectory(session / "logs/excite_00.csv", load_map(m), model)


def test_unknown_parameter_element(session: Path) -> None:
    import mujoco

    from real2sim.calibration.params.resolve import resolve
    from real2sim.params import ParamSpec

    model = mujoco.MjModel.from_xml_path(str(session / "robot/double_pendulum.xml"))
    assert [p.name for p in resolve([ParamSpec("joint:*.damping")], model)] == [
        "joint:shoulder.damping",
        "joint:elbow.damping",
    ]
    with pytest.raises(ConfigError, match="wrist"):
        resolve([ParamSpec("joint:wrist.damping")], model)


def test_unidentifiable_group_named() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(200, 1))
    jac = np.hstack([a, 2 * a, rng.normal(size=(200, 1))])  # p0 and p1 only enter as p0 + 2 p1
    u = uncertainty(jac, rng.normal(size=200) * 0.01, ["a", "b", "c"])
    assert np.isinf(u.stderr[0]) and np.isinf(u.stderr[1]) and np.isfinite(u.stderr[2])
    assert ("a", "b") in u.groups


def test_signal_steps() -> None:
    t = np.linspace(0, 2, 401)
    x = np.sin(2 * np.pi * t)
    noisy = x + np.random.default_rng(0).normal(0, 0.05, t.size)
    f = butter_filtfilt(noisy, 0.05)
    assert np.sqrt(np.mean((f - x) ** 2)) < 0.02  # filtered, no phase lag
    d = differentiate(t, x)
    assert np.max(np.abs(d[5:-5] - 2 * np.pi * np.cos(2 * np.pi * t[5:-5]))) < 0.01
    tl = np.arange(5) * 0.1
    u = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    # held signal delayed by 0.05 s, mean over [0.1, 0.2): half u[0], half u[1]
    assert held_shifted_mean(tl, u, 0.05, np.array([0.1]), 0.1)[0] == pytest.approx(0.5)
