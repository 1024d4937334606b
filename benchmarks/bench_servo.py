"""Servo benchmark on the real STS3215 pendulum bench: calibrate a position servo from the Kp-32 logs (start:
MuJoCo Menagerie's SO-101 servo values), replay every whole log open loop on other payloads and firmware gains,
compare with the published M1 MuJoCo export, with plain ``mujoco.sysid`` on the same parameters and windows, and
check the randomised ensemble's coverage of held-out logs.

    python benchmarks/bench_servo.py                 # full run (a few minutes on 2 cores)
    python benchmarks/bench_servo.py --quick         # CI smoke (fewer windows and iterations, no sysid)
    python benchmarks/bench_servo.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sysid_baseline import sysid_fit  # noqa: E402 (this folder is on sys.path)

DATA = ROOT.parent / "shared" / "data" / "robot_logs" / "sts3215_bench"
G = 9.81
MENAGERIE = {"kp": 17.8, "damping": 0.60, "armature": 0.028, "frictionloss": 0.052, "forcerange": 3.35}
M1 = {
    "kp": 29.07744066635301,
    "damping": 1.1793454779199242,
    "armature": 0.025896903176634425,
    "frictionloss": 0.11434146818509992,
    "forcerange": 5.510764878546495,
}  # published/id008/mujoco_params.txt
FIRMWARE_REF = 32.0
PIECE_S = 2.0  # the randomisation's spread: fits of pieces this long (three per 6 s log)
PRIOR = 0.1  # weight of the per-log fits' pull of log(value) towards the joint fit (randomisation spread)  # the published export and the training logs are at firmware Kp 32
FIT = [
    "actuator:servo.kp",
    "actuator:servo.forcerange",
    "actuator:servo.kv",
    "joint:hinge.damping",
    "joint:hinge.armature",
    "joint:hinge.frictionloss",
]
MAP = """time = "timestamp"
constants = ["kp", "mass", "length"]
[joints.hinge]
qpos = "position"
[actuators.servo]
ctrl = "goal_position"
enable = "torque_enable"
"""
MAP_EMF = (
    MAP
    + """[actuators.servo_emf]
ctrl = "goal_position"
enable = "torque_enable"
"""
)


def yaml_inertia(mass: float) -> tuple[float, float]:
    """(inertia about the axis [kg·m²], gravity torque amplitude [N·m]) from the authors' configs."""
    import yaml

    name = "sysid_config_mB-len100.yaml" if mass < 0.7 else "sysid_config_mBC-len100.yaml"
    cfg = yaml.safe_load((DATA / "published" / "configs" / name).read_text())["sysid"]
    return float(cfg["total_inertia"]), abs(float(cfg["total_g_bias"]))


def pendulum_mjcf(mass: float, servo: dict, timestep: float = 0.002) -> str:
    """1-DoF bench: hanging arm (q = 0 down) whose inertia about the axis and gravity torque match the yaml.
    With ``servo["emf"]``: the DC-motor form, a back-EMF damper outside the torque limit, on while powered."""
    emf = ""
    if "emf" in servo:
        emf = (
            f'<general name="servo_emf" joint="hinge" gainprm="0" biastype="affine" '
            f'biasprm="0 0 {-servo["emf"]}"/>'
        )
    inertia, gbias = yaml_inertia(mass)
    m = mass + 0.036  # disc + arm
    d = gbias / (m * G)
    icom = inertia - m * d * d
    return f"""<mujoco model="sts3215_bench">
  <option timestep="{timestep}" integrator="implicitfast"/>
  <worldbody>
    <body name="arm">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="{servo["damping"]}" armature="{servo["armature"]}"
             frictionloss="{servo["frictionloss"]}"/>
      <inertial pos="0 0 {-d}" mass="{m}" diaginertia="{icom} {icom} {icom}"/>
    </body>
  </worldbody>
  <actuator>
    <position name="servo" joint="hinge" kp="{servo["kp"]}" kv="{servo.get("kv", 0.0)}" forcerange="{-servo["forcerange"]} {servo["forcerange"]}"/>
    {emf}
  </actuator>
</mujoco>
"""


def load_logs(tmp: Path, pattern: str = "*.json.gz", emf: bool = False):
    from real2sim.calibration.logs.signal import despike
    from real2sim.calibration.maps.logmap import load_map, load_trajectory
    from real2sim.calibration.run import prepare

    (tmp / "map.toml").write_text(MAP_EMF if emf else MAP)
    lmap = load_map(tmp / "map.toml")
    trajs = []
    for p in sorted((DATA / "logs").glob(pattern)):
        tr, _ = load_trajectory(p, lmap)
        trajs.append(despike(tr, 0.5))
    return prepare(trajs, 0.1, from_qpos=True, smooth_wn=0.2)


def model_for(tmp: Path, mass: float, servo: dict):
    import mujoco

    p = tmp / f"bench_{mass}_{abs(hash(tuple(servo.items())))}.xml"
    p.write_text(pendulum_mjcf(mass, servo))
    return mujoco.MjModel.from_xml_path(str(p))


def per_log_models(tmp: Path, trajs, servo: dict) -> list:
    """Each log's model: its payload's MJCF with ``servo``, the position gain scaled by firmware Kp / 32."""
    from real2sim.calibration.sim.setups import Setup, SetupModels

    out = []
    for t in trajs:
        m = model_for(tmp, t.constants["mass"], servo)
        sm = SetupModels(m, [], [Setup(gain_scale=t.constants["kp"] / FIRMWARE_REF, actuators=("servo",))])
        out.append(sm.models([], np.zeros(0))[0])
    return out


def fit_windows(base, trajs, names, x0, lower, upper, window_s, max_nfev, prior=None):
    from real2sim.calibration.fitting import randomization as R
    from real2sim.calibration.fitting.least_squares import fit_bounded
    from real2sim.calibration.params.resolve import resolve
    from real2sim.calibration.sim.objective import WindowObjective
    from real2sim.calibration.sim.simulate import Simulator, make_windows
    from real2sim.params import ParamSpec

    params = resolve([ParamSpec(n) for n in names], base)
    win = make_windows(trajs, window_s, float(base.opt.timestep))
    obj = WindowObjective(
        Simulator(base, win, trajs[0].joint_names, trajs[0].actuator_names, nthread=2),
        params,
        trajs[0].actuator_names,
    )
    t0 = time.perf_counter()
    fun = obj if prior is None else R.with_prior(obj, *prior)
    out = fit_bounded(fun, x0, lower, upper, np.ones(len(x0), bool), max_nfev=max_nfev)
    return out, time.perf_counter() - t0, obj, params


def ensemble_check(tmp: Path, keys, ensemble: np.ndarray, logs, noise: float = 0.0) -> tuple[float, float]:
    """Sample-weighted (coverage of the 5-95 % band, band width [rad]) of an ensemble replayed on ``logs``, with
    Gaussian observation noise of std ``noise`` added to every member (a prediction band)."""
    from real2sim.calibration.fitting import randomization as R
    from real2sim.calibration.sim.servo import replay

    models = [[per_log_models(tmp, [t], dict(zip(keys, v, strict=False)))[0] for v in ensemble] for t in logs]
    delays = np.stack([ensemble[:, len(keys)], np.zeros(len(ensemble))], axis=1)  # servo delay, emf none
    sims = replay(models, logs, delays)
    cov = [R.band_coverage(q, t.qpos[1:], noise) for q, t in zip(sims, logs, strict=True)]
    n = np.array([t.n - 1 for t in logs], float)
    return float(n @ [c[0] for c in cov] / n.sum()), float(n @ [c[1] for c in cov] / n.sum())


def main(argv=None) -> dict:
    from real2sim.calibration.fitting import randomization as R
    from real2sim.calibration.fitting.least_squares import cost_of
    from real2sim.calibration.sim.servo import replay_rmse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--sweep", action="store_true", help="also the band of k = 0.5, 2 and of ±10 %% uniform ranges"
    )
    ap.add_argument(
        "--out", type=Path, help="write randomization.yaml, events_isaaclab.py and events_mjlab.py here"
    )
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench_servo_"))
    trajs = load_logs(tmp, emf=True)
    train = [t for t in trajs if t.constants["kp"] == FIRMWARE_REF and t.constants["mass"] == 0.535]
    held = [t for t in trajs if not any(t is u for u in train)]
    keys = ["kp", "forcerange", "kv", "damping", "armature", "frictionloss", "emf"]
    names = [*FIT, "actuator:servo_emf.kv", "delay:servo"]
    start = dict(MENAGERIE, kv=0.1, emf=0.1)  # Menagerie has no velocity terms: log-scale fits start at 0.1
    x0 = np.array([start[k] for k in keys] + [0.01])  # delay starts at one log sample
    lower = np.full(len(x0), 1e-4)
    upper = np.array([100.0, 20.0, 5.0, 5.0, 0.5, 1.0, 5.0, 0.1])
    base = model_for(tmp, 0.535, start)
    nfev = 8 if args.quick else 30
    out, wall, obj, params = fit_windows(base, train, names, x0, lower, upper, 1.0, nfev)
    fitted = dict(zip(keys, out.values, strict=False))
    delay = float(out.values[-1])
    res: dict = {
        "fit": {
            "values": {n: float(v) for n, v in zip(names, out.values, strict=True)},
            "wall_s": wall,
            "cost_initial": out.cost_initial,
            "cost_final": out.cost_final,
            "windows": len(obj.sim.win.start),
        }
    }
    table = {}
    for label, servo, d in (
        ("menagerie", start | {"kv": 0.0, "emf": 0.0}, 0.0),
        ("real2sim", fitted, delay),
        ("published_M1", M1, 0.0),
    ):
        r = replay_rmse(per_log_models(tmp, trajs, servo), trajs, np.array([d, 0.0]))
        for t, e in zip(trajs, r, strict=True):
            table.setdefault(Path(t.source).name, {})[label] = round(float(e), 5)
        if label == "real2sim":  # the prediction band's noise: the residual on the training logs
            fit_on = [any(t is u for u in train) for t in trajs]
            n_tr = np.array([t.n - 1 for t, f in zip(trajs, fit_on, strict=True) if f], float)
            r_tr = np.array([e for e, f in zip(r, fit_on, strict=True) if f])
            noise = float(np.sqrt(n_tr @ r_tr**2 / n_tr.sum()))
        res.setdefault("median_holdout_rmse", {})[label] = float(
            np.median([e for e, t in zip(r, trajs, strict=True) if any(t is u for u in held)])
        )
    res["replay_rmse"] = table
    if not args.quick:  # the plain position servo (joint damping, kv inside the limit) on the same data
        ptrajs = load_logs(tmp)
        ptrain = [t for t in ptrajs if t.constants["kp"] == FIRMWARE_REF and t.constants["mass"] == 0.535]
        pstart = dict(MENAGERIE, kv=0.1)
        pbase = model_for(tmp, 0.535, pstart)
        sel = [0, 1, 2, 3, 4, 5, 7]  # no emf
        po, *_ = fit_windows(pbase, ptrain, [*FIT, "delay:servo"], x0[sel], lower[sel], upper[sel], 1.0, nfev)
        pmodels = per_log_models(tmp, ptrajs, dict(zip(keys[:-1], po.values, strict=False)))
        pr = replay_rmse(pmodels, ptrajs, po.values[-1:])
        held_idx = [i for i, t in enumerate(trajs) if any(t is u for u in held)]
        forms = {
            "position": float(np.median(pr[held_idx])),
            "dcmotor": res["median_holdout_rmse"]["real2sim"],
        }
        res["actuator_forms"] = {**forms, "chosen": min(forms, key=forms.get), "position_cost": po.cost_final}
    # plain mujoco.sysid on the same parameters, start and windows (torque on throughout: sysid cannot switch it;
    # no delay: the simulator's ctrl shift has no MjSpec modifier here)
    if not args.quick:
        on = [t for t in train if t.enable is None or t.enable.all()]
        n7, x7, lo7, hi7 = names[:-1], x0[:-1], lower[:-1], upper[:-1]
        o2, w2, obj2, p2 = fit_windows(base, on, n7, x7, lo7, hi7, 1.0, nfev)
        path = tmp / "sysid_model.xml"
        path.write_text(pendulum_mjcf(0.535, start))
        v_s, w_s = sysid_fit(path, p2, x7, lo7, hi7, obj2, max_iters=nfev, name="servo")
        res["vs_sysid"] = {
            "windows": len(obj2.sim.win.start),
            "real2sim": {"wall_s": w2, "cost": o2.cost_final},
            "mujoco.sysid": {"wall_s": w_s, "cost": cost_of(obj2(v_s[None])[0]), "values": v_s.tolist()},
            "speedup": w_s / w2,
            "cost_ratio": o2.cost_final / max(cost_of(obj2(v_s[None])[0]), 1e-300),
        }
    # randomisation: spread of per-piece fits (warm-started at the joint fit) → ranges; ensemble on held-out logs
    per, per_log = [], []  # fits of each 2 s piece of each training log (15), and of each whole log (5)
    for t in train:
        whole = [] if args.quick else [(t, per_log)]
        for piece, dest in [*((q, per) for q in R.pieces(t, PIECE_S)), *whole]:
            o, *_ = fit_windows(
                base,
                [piece],
                names,
                out.values,
                lower,
                upper,
                1.0,
                3 if args.quick else 10,
                prior=(out.values, PRIOR),
            )
            dest.append(o.values)
    per = np.array(per)
    nens = 8 if args.quick else 32

    def check(rg, logs, sd=noise):
        return ensemble_check(tmp, keys, R.sample(rg, nens), logs, sd)

    if args.quick:
        k, ranges, tried = 2.0, R.ranges_from_fits(out.values, per, lower, upper, 2.0, log=True), {}
    else:  # the smallest k whose ensemble (with the residual noise) covers 90 % of the training logs' samples
        k, ranges, tried = R.scale_to_coverage(
            out.values, per, lower, upper, lambda rg: check(rg, train)[0], log=True
        )
    rand = {
        "k": k,
        "noise_std_rad": noise,
        "train_coverage_by_k": tried,
        "ranges": {n: r.tolist() for n, r in zip(names, ranges, strict=True)},
    }
    u20 = R.uniform_ranges(out.values, 0.2)
    for label, rg, sd in (
        ("data", ranges, noise),  # the prediction band: parameter ranges plus the fit's residual noise
        ("data_no_noise", ranges, 0.0),
        *(
            [
                (
                    "data_per_log_noise",
                    R.ranges_from_fits(out.values, np.array(per_log), lower, upper, k, True),
                    noise,
                )
            ]
            if per_log
            else []
        ),
        ("uniform_20pct", u20, 0.0),
        ("uniform_20pct_noise", u20, noise),
        *(
            (f"{lab}_noise", rg, noise)
            for lab, rg in (
                ("data_k0.5", R.ranges_from_fits(out.values, per, lower, upper, 0.5, log=True)),
                ("data_k2", R.ranges_from_fits(out.values, per, lower, upper, 2.0, log=True)),
                ("uniform_10pct", R.uniform_ranges(out.values, 0.1)),
            )
            if args.sweep
        ),
    ):
        cov, width = check(rg, held, sd)
        rand[label] = {"coverage": cov, "band_width_rad": width}
    res["randomization"] = rand
    ranges_check = {k2: v for k2, v in rand.items() if k2 not in ("ranges",)}
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "randomization.yaml").write_text(R.to_yaml(names, ranges, ranges_check, {"hinge": noise}))
        (args.out / "events_isaaclab.py").write_text(R.event_terms(names, ranges, {"hinge": noise}))
        (args.out / "events_mjlab.py").write_text(R.mjlab_event_terms(names, ranges, {"hinge": noise}))
    print(json.dumps({k: v for k, v in res.items() if k != "replay_rmse"}, indent=1))
    print(f"{'log':45s} {'menagerie':>10s} {'real2sim':>10s} {'M1':>10s}")
    for n, row in table.items():
        print(f"{n:45s} {row['menagerie']:10.4f} {row['real2sim']:10.4f} {row['published_M1']:10.4f}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
