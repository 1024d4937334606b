"""The digital twin on the shared SO-101 recording: compose the SO-101 MJCF with a scene package (uncalibrated, and
calibrated from three episodes), replay every episode actuated, and compare the held-out episode's tracking error.

    python benchmarks/bench_twin.py --package PKG [--calibration CAL | --calibrate] [--json F] [--out DIR] [--quick]

PKG: a scene package (e.g. ``real2sim demo -o demo`` → ``demo/package``). ``--calibrate`` runs ``real2sim calibrate``
on episodes 0-2 (episode 3 held out) first; ``--quick`` replays 60 frames of one episode, uncalibrated (a smoke run).
Prints a table and the timings (compose, one whole episode replayed) with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SO101 = ROOT.parent / "shared" / "data" / "robot_logs" / "so101_lerobot"
BASE_XY = (0.0, 0.3)
HELD_OUT = 3
FIT = "actuator:*.kp,actuator:*.kv,delay:*"
"""What ``--calibrate`` fits: the servos' gain, damping and delay (docs/twin.md: fit A, the lowest held-out error of
the three fits tried)."""


def _calibrate(out: Path) -> Path:
    from real2sim.calibration.config import CalibrateCfg
    from real2sim.calibration.run import run_calibrate

    src = (ROOT / "calibration" / "models" / "so101_lerobot_map.toml").read_text()
    m = out / "map_train012.toml"
    m.write_text(src.replace("episodes = [0, 1]", "episodes = [0, 1, 2]"))
    cfg = CalibrateCfg(model=SO101 / "model" / "so101_new_calib.xml", logs=(SO101 / "dataset",),
                       holdout=(SO101 / "dataset",), map=m, fit=tuple(FIT.split(",")), max_windows=24,
                       out_dir=out / "calibration")  # fmt: skip
    run_calibrate(cfg)
    return out / "calibration"


def _compose(pkg: Path, out: Path, cal: Path | None) -> tuple[Path, float]:
    from real2sim.twin.config import TwinCfg
    from real2sim.twin.run import run_twin

    t0 = time.perf_counter()
    run_twin(TwinCfg(robot=SO101 / "model" / "so101_new_calib.xml", scene=pkg, out_dir=out, calibration=cal,
                     base_pose=BASE_XY, overwrite=True))  # fmt: skip
    return out, time.perf_counter() - t0


def _replay(twin: Path, out: Path, episodes: tuple[int, ...], frames: int | None, variations: int = 0):
    from real2sim.twin.config import ReplayCfg
    from real2sim.twin.run import run_replay

    cfg = ReplayCfg(twin=twin, episodes=SO101 / "dataset", out_dir=out, episode=episodes, max_frames=frames,
                    variations=variations, overwrite=True)  # fmt: skip
    return run_replay(cfg)


def newton_check(twin: Path) -> dict:
    """The twin's USD imported by Newton (``ModelBuilder.add_usd``): body count, masses and forward kinematics at a
    random arm pose against MuJoCo's (the USD's joint axes, anchors and zero checked, not only that it loads)."""
    import contextlib
    import io

    import mujoco
    import numpy as np

    from real2sim.stdio import native_output_silenced

    with native_output_silenced():
        import warp as wp

        wp.config.log_level = wp.LOG_WARNING
        wp.init()
        import newton
    b: Any = newton.ModelBuilder()
    with contextlib.redirect_stdout(io.StringIO()):
        b.add_usd(str(twin / "twin.usd"), load_visual_shapes=False)
    m: Any = b.finalize(device="cpu")
    labels = [str(k) for k in (getattr(b, "body_label", None) or b.body_key)]
    mm = mujoco.MjModel.from_xml_path(str(twin / "scene.xml"))
    md = mujoco.MjData(mm)
    doc = json.loads((twin / "twin.json").read_text())
    q = np.random.default_rng(0).uniform(-0.6, 0.6, len(doc["robot"]["joints"]))
    for n, v in zip(doc["robot"]["joints"], q, strict=True):
        md.qpos[mm.joint("robot/" + n).qposadr[0]] = v
    mujoco.mj_forward(mm, md)
    jq = m.joint_q.numpy().copy()
    starts = m.joint_q_start.numpy()
    rev = [i for i, t in enumerate(b.joint_type) if int(t) == int(newton.JointType.REVOLUTE)]
    for k, i in enumerate(rev):
        jq[starts[i]] = q[k]
    state = m.state()
    newton.eval_fk(m, wp.array(jq, dtype=float, device="cpu"), m.joint_qd, state)
    bq = state.body_q.numpy()
    robot = [i for i, lab in enumerate(labels) if lab.startswith("/Robot/")]
    fk = max(float(np.linalg.norm(bq[i, :3] - md.xpos[mm.body("robot/" + labels[i].rsplit("/", 1)[-1]).id]))
             for i in robot)  # fmt: skip
    mass = max(abs(float(m.body_mass.numpy()[i]) - float(mm.body("robot/" + labels[i].rsplit("/", 1)[-1]).mass[0]))
               for i in robot)  # fmt: skip
    return {"bodies": int(m.body_count), "robot_bodies": len(robot), "revolute": len(rev),
            "max_fk_error_m": fk, "max_mass_error_kg": mass}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--package", type=Path, required=True)
    ap.add_argument("--calibration", type=Path)
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--newton", action="store_true", help="also import the twin's USD into Newton and check it"
    )
    ap.add_argument("--json", type=Path)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    from real2sim.stdio import route_mujoco_warnings

    route_mujoco_warnings()
    work = a.out or Path(tempfile.mkdtemp(prefix="bench_twin_"))
    work.mkdir(parents=True, exist_ok=True)
    res: dict = {"load_before": os.getloadavg()}
    twin_u, t_u = _compose(a.package, work / "twin_uncalibrated", None)
    res["compose_s"] = round(t_u, 3)
    if a.quick:
        r = _replay(twin_u, work / "replay_quick", (HELD_OUT,), 60)
        res["quick_mean_rmse_rad"] = r.report["mean_rmse_rad"]
        print(
            f"compose {t_u:.2f} s; 60 frames replayed in {r.seconds:.2f} s; mean RMSE {r.report['mean_rmse_rad']:.4f} rad"
        )
    else:
        cal = a.calibration or (_calibrate(work) if a.calibrate else None)
        t0 = time.perf_counter()
        one = _replay(twin_u, work / "replay_one", (HELD_OUT,), None)
        res["replay_one_episode_s"] = round(time.perf_counter() - t0, 3)
        res["episode_seconds"] = one.report["episodes"][0]["frames"] / one.report["stepping"]["fps"]
        rows = {"uncalibrated": _replay(twin_u, work / "replay_uncalibrated", (), None).report}
        if cal is not None:
            twin_c, t_c = _compose(a.package, work / "twin_calibrated", cal)
            res["compose_calibrated_s"] = round(t_c, 3)
            rows["calibrated"] = _replay(twin_c, work / "replay_calibrated", (), None).report
        res["replays"] = {k: {e["episode"]: e["tracking"] for e in v["episodes"]} for k, v in rows.items()}
        joints = list(next(iter(res["replays"]["uncalibrated"].values()))["joints"])
        print(
            f"{'model':14s} {'episode':>7s} "
            + " ".join(f"{j[:12]:>12s}" for j in joints)
            + "    mean  lag[s]"
        )
        for k, eps in res["replays"].items():
            for e, t in eps.items():
                vals = " ".join(f"{t['joints'][j]['rmse_rad']:12.4f}" for j in joints)
                mark = " (held out)" if e == HELD_OUT and k == "calibrated" else ""
                print(f"{k:14s} {e:7d} {vals} {t['mean_rmse_rad']:7.4f} {t['mean_lag_s']}{mark}")
        if "calibrated" in rows:
            u = res["replays"]["uncalibrated"][HELD_OUT]["mean_rmse_rad"]
            c = res["replays"]["calibrated"][HELD_OUT]["mean_rmse_rad"]
            res["held_out_ratio"] = round(c / u, 4)
            print(
                f"held-out episode {HELD_OUT}: calibrated / uncalibrated mean RMSE = {c:.4f} / {u:.4f} = {c / u:.3f}"
            )
        print(
            f"compose {t_u:.2f} s; one {res['episode_seconds']:.1f} s episode replayed in {res['replay_one_episode_s']:.2f} s"
        )
    if a.newton:
        res["newton"] = newton_check(twin_u)
        print(f"newton imports twin.usd: {res['newton']}")
    res["load_after"] = os.getloadavg()
    print(f"load average before {res['load_before'][0]:.2f}, after {res['load_after'][0]:.2f}")
    if a.json:
        a.json.write_text(json.dumps(res, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
