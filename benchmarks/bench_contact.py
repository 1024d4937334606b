"""Benchmark: contact of a real tossed cube (ContactNets, 413 tosses) fitted three ways in one run.

real2sim's joint window fit, a plain MuJoCo grid search over the same parameters (60 points over friction and
solref, ranked by the whole-toss error on the training tosses, as one would do by hand) and ``mujoco.sysid`` on
the same windows. Every fourth of five tosses is fitted, every fifth is held out. Each result is scored on the
held-out tosses: mean position error (cube sides) at the end of 0.1 s windows started from every measured sample,
along the whole toss simulated from its first sample, and at rest (the last sample); and the fit's wall time.

    python benchmarks/bench_contact.py            # all tosses
    python benchmarks/bench_contact.py --quick    # CI smoke on 15 tosses (< 60 s)
    python benchmarks/bench_contact.py --json out.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DATA = ROOT.parent / "shared" / "data" / "object_logs" / "contactnets_cube" / "tosses"
FIT = ("geom:cube_geom.friction", "geom:cube_geom.solref", "geom:cube_geom.solimp")
GRID_MU = (0.1, 0.15, 0.2, 0.3, 0.5, 1.0)
GRID_TC = (0.005, 0.01, 0.02, 0.04, 0.08)
GRID_DR = (0.5, 1.0)


def scores(model, lay, roller, logs) -> dict:
    from real2sim.calibration.contact.evaluate import evaluate

    ev = evaluate(model, lay, roller, logs, ["holdout"] * len(logs), 0.1)
    return {w: ev.mean("holdout", w) for w in ("window", "whole", "rest")}


def grid_search(base, params, roller, lay, train, quick: bool) -> tuple[np.ndarray, float, dict]:
    """Best of the grid by whole-toss error on the training tosses (and, for reference, the best by windows)."""
    from real2sim.calibration.contact.fit import model_at
    from real2sim.calibration.contact.sim import make_windows

    names = [p.name for p in params]
    x_default = np.array([0.0] * len(params))
    t0, c0 = time.perf_counter(), time.process_time()
    win = make_windows(base, lay, train, 0.1, stride=2, contact_only=True, max_windows=2000)
    rows = []
    pts = list(
        itertools.product(GRID_MU[1:3] if quick else GRID_MU, GRID_TC[:2] if quick else GRID_TC, GRID_DR)
    )
    for mu, tc, dr in pts:
        x = x_default.copy()
        for k, n in enumerate(names):
            x[k] = {
                "geom:cube_geom.friction[0]": mu,
                "geom:cube_geom.solref[0]": tc,
                "geom:cube_geom.solref[1]": dr,
            }.get(n, float(np.nan))
        rows.append(x)
    base_vals = np.array([float(v) for v in _values(base, params)])
    xs = [np.where(np.isnan(x), base_vals, x) for x in rows]
    whole, wins = [], []
    for x in xs:
        m = model_at(base, params, x)
        paths = roller.whole(m, lay, train)
        whole.append(
            float(
                np.mean(
                    [
                        np.linalg.norm(p[:, 0, :3] - lg.pose["cube"][:, :3], axis=1).mean()
                        for p, lg in zip(paths, train, strict=True)
                    ]
                )
            )
        )
        end = roller.window_ends(m, lay, win)
        wins.append(float(np.linalg.norm(end[:, 0, :3] - win.target[:, 0, :3], axis=1).mean()))
    wall = time.perf_counter() - t0
    info = {"points": len(xs), "best_by_windows": xs[int(np.argmin(wins))], "cpu_s": time.process_time() - c0}
    return xs[int(np.argmin(whole))], wall, info


def _values(model, params):
    from real2sim.calibration.contact.params import get_value

    return [get_value(model, p) for p in params]


def sysid_try(base_path: Path, params, x0, lower, upper, lay, train, quick: bool) -> dict:
    """``mujoco.sysid`` on windows of the training tosses: a frame-position sensor on the cube, its free joint's
    state as each window's initial state, the geom values through MjSpec modifiers."""
    import mujoco
    from mujoco import sysid

    from real2sim.calibration.contact.mjcf import calibrated_spec
    from real2sim.calibration.contact.sim import make_windows

    out: dict = {}
    try:
        spec = mujoco.MjSpec.from_file(str(base_path))
        spec.add_sensor(
            name="cube_pos",
            type=mujoco.mjtSensor.mjSENS_FRAMEPOS,
            objtype=mujoco.mjtObj.mjOBJ_BODY,
            objname="cube",
        )
        model = spec.compile()
        win = make_windows(
            model, lay, train, 0.1, stride=4, contact_only=True, max_windows=10 if quick else 60
        )
        pd = sysid.ParameterDict()
        for k, (p, v, lo, hi) in enumerate(zip(params, x0, lower, upper, strict=True)):

            def modify(s, par, k=k):
                vals = np.array(x0, float)
                vals[k] = float(par.value[0])
                keep = np.zeros(len(params), bool)
                keep[k] = True
                one = calibrated_spec(base_path, params, vals, keep)
                g, g1 = s.geom(params[k].element), one.geom(params[k].element)
                setattr(g, params[k].attribute, getattr(g1, params[k].attribute))
                g.priority = 1

            pd.add(
                sysid.Parameter(
                    p.name.replace("[", "_").replace("]", ""),
                    nominal=float(v),
                    min_value=float(lo),
                    max_value=float(hi),
                    modifier=modify,
                )
            )
        names, states, ctrls, sensors = [], [], [], []
        horizon = win.nstep * float(model.opt.timestep)
        for w in range(win.state.shape[0]):
            s = win.state[w]
            log = train[int(win.log_index[w])]
            i = int(np.searchsorted(log.time, win.t0[w]))
            j = int(np.searchsorted(log.time, win.t0[w] + horizon, side="right"))
            t = log.time[i:j] - log.time[i]  # every logged sample of the window is compared
            names.append(f"w{w}")
            qpos, qvel = s[1 : 1 + model.nq], s[1 + model.nq : 1 + model.nq + model.nv]
            states.append(sysid.create_initial_state(model, qpos, qvel))
            ctrls.append(sysid.TimeSeries(t, np.zeros((t.size, model.nu))))
            sensors.append(sysid.TimeSeries.from_names(t, log.pose["cube"][i:j, :3], model, ["cube_pos"]))
        fn = sysid.build_residual_fn(
            models_sequences=[sysid.ModelSequences("cube", spec, names, states, ctrls, sensors)]
        )
        t0, c0 = time.perf_counter(), time.process_time()
        opt, _ = sysid.optimize(
            initial_params=pd, residual_fn=fn, optimizer="mujoco", verbose=False, max_iters=2 if quick else 6
        )
        out["wall_s"] = time.perf_counter() - t0
        out["cpu_s"] = time.process_time() - c0
        out["values"] = [float(opt[p.name.replace("[", "_").replace("]", "")].value[0]) for p in params]
        out["windows"] = int(win.state.shape[0])
    except Exception as e:  # noqa: BLE001 - the benchmark reports why the peer could not run
        out["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return out


def run(quick: bool) -> dict:
    from real2sim.calibration.config import CalibrateCfg
    from real2sim.calibration.contact.fit import model_at
    from real2sim.calibration.contact.logs import read_motions
    from real2sim.calibration.contact.run import load_model, run_contact, set_cone
    from real2sim.calibration.contact.sim import Roller, layout
    from real2sim.calibration.maps.logmap import load_map

    if not DATA.is_dir():
        raise SystemExit(f"error: {DATA}: the shared cube tosses are not here")
    tmp = Path(tempfile.mkdtemp(prefix="bench_contact_"))
    from tests.helpers.cube import CUBE, MAP

    (tmp / "cube.xml").write_text(CUBE.format(table=""))  # the check's model: MuJoCo's default contact
    (tmp / "map.toml").write_text(MAP)
    files = sorted(DATA.glob("*.csv"))
    if quick:
        files = files[:15]
    logs_dir = tmp / "tosses"
    logs_dir.mkdir()
    for f in files:
        (logs_dir / f.name).symlink_to(f)
    lmap = load_map(tmp / "map.toml")
    model = load_model(tmp / "cube.xml")
    logs = read_motions([logs_dir], lmap, model)
    train = [m for k, m in enumerate(logs) if k % 5 != 4]
    hold = [m for k, m in enumerate(logs) if k % 5 == 4]
    lay = layout(model, logs[0])
    roller = Roller(model)
    cfg = CalibrateCfg(
        model=tmp / "cube.xml", logs=(logs_dir,), map=tmp / "map.toml", fit=FIT, report=False,
        max_windows=150 if quick else None, max_nfev=3 if quick else 40,
    )  # fmt: skip
    t0 = time.perf_counter()
    rep = run_contact(cfg, lmap)
    ours_wall = time.perf_counter() - t0
    params = list(rep.params)
    base = model_at(model, [], np.zeros(0))
    ours = model_at(base, params, np.where(np.isfinite(rep.stderr), rep.values, rep.initial))
    set_cone(ours, rep.cone or "model")  # the calibrated model's cone
    methods = {
        "MuJoCo defaults": {"wall_s": 0.0, **scores(model, lay, roller, hold)},
        "real2sim": {
            "wall_s": rep.fit_s,
            "cpu_s": rep.fit_cpu_s,
            "wall_s_with_evaluation": ours_wall,
            **scores(ours, lay, roller, hold),
        },
    }
    xg, gwall, ginfo = grid_search(base, params, roller, lay, train, quick)
    methods["grid (ranked by whole toss)"] = {
        "wall_s": gwall,
        "cpu_s": ginfo["cpu_s"],
        **scores(model_at(base, params, xg), lay, roller, hold),
    }
    methods["grid (ranked by windows)"] = {
        "wall_s": gwall,
        "cpu_s": ginfo["cpu_s"],
        **scores(model_at(base, params, ginfo["best_by_windows"]), lay, roller, hold),
    }
    ell = model_at(base, [], np.zeros(0))
    if set_cone(ell, "elliptic"):  # the same grid with the calibrated model's cone: the cone's share
        xe, ewall, einfo = grid_search(ell, params, roller, lay, train, quick)
        methods["grid, elliptic cone (ranked by whole toss)"] = {
            "wall_s": ewall,
            "cpu_s": einfo["cpu_s"],
            **scores(model_at(ell, params, xe), lay, roller, hold),
        }
    methods.update(pybullet_methods(model, lay, train, hold, rep, quick))
    sy = sysid_try(tmp / "cube.xml", params, rep.initial, rep.lower, rep.upper, lay, train, quick)
    if "values" in sy:
        methods["mujoco.sysid"] = {
            "wall_s": sy["wall_s"],
            "cpu_s": sy["cpu_s"],
            **scores(model_at(base, params, np.array(sy["values"])), lay, roller, hold),
        }
    g = methods["grid (ranked by whole toss)"]
    o = methods["real2sim"]
    pbd, pbf = methods["PyBullet defaults"], methods["PyBullet, fitted for PyBullet"]
    return {
        "pybullet_fitted_vs_defaults": {w: pbf[w] / pbd[w] for w in ("window", "whole", "rest")},
        "dataset": f"ContactNets cube, {len(train)} fitted / {len(hold)} held-out tosses",
        "methods": methods,
        "ratios_vs_grid": {w: o[w] / g[w] for w in ("window", "whole", "rest")},
        "fitted": {p.name: float(v) for p, v in zip(params, rep.values, strict=True)},
        "grid_points": ginfo["points"],
        "sysid": {k: v for k, v in sy.items() if k != "values"},
    }


def pybullet_methods(model, lay, train, hold, rep, quick: bool) -> dict:
    """PyBullet's defaults, the MuJoCo-fitted friction as the package URDF gives it, and a fit for PyBullet."""
    from pybullet_contact import BATCH, BulletCubes, fit, scores

    from real2sim.calibration.contact.fit import model_at
    from real2sim.calibration.contact.package import restitution
    from real2sim.calibration.contact.sim import make_windows

    mb = model_at(model, [], np.zeros(0))
    mb.opt.timestep = 1.0 / 240.0  # PyBullet's step: windows of 24 steps = 0.1 s
    side = lay.scale[0]
    hold_win = make_windows(mb, lay, hold, 0.1)
    train_win = make_windows(
        mb, lay, train, 0.1, stride=2, contact_only=True, max_windows=100 if quick else 600
    )
    sim = BulletCubes(BATCH, side, float(model.body_mass[model.body("cube").id]))
    v = {p.name: float(x) for p, x in zip(rep.params, rep.values, strict=True)}
    urdf = np.array([v["geom:cube_geom.friction[0]"], v["geom:cube_geom.friction[1]"],
                     v["geom:cube_geom.friction[2]"], max(restitution(v["geom:cube_geom.solref[1]"]), 1e-3)])  # fmt: skip
    out = {
        "PyBullet defaults": {"wall_s": 0.0, **scores(sim, None, hold, hold_win, mb.nq, side)},
        "PyBullet, MuJoCo-fitted values (package URDF)": {
            "wall_s": 0.0,
            **scores(sim, urdf, hold, hold_win, mb.nq, side),
        },
    }
    f = fit(sim, train_win, mb.nq, side, max_nfev=3 if quick else 30)
    out["PyBullet, fitted for PyBullet"] = {
        "wall_s": f["wall_s"],
        "cpu_s": f["cpu_s"],
        "values": dict(
            zip(("lateral", "spinning", "rolling", "restitution"), map(float, f["values"]), strict=True)
        ),
        **scores(sim, f["values"], hold, hold_win, mb.nq, side),
    }
    sim.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small CI smoke run on 15 tosses")
    ap.add_argument("--json", type=Path, help="write the results as JSON here")
    args = ap.parse_args()
    res = run(args.quick)
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"contact benchmark: {res['dataset']} (errors in cube sides, held-out)")
    for c in ("method", "fit wall [s]", "fit CPU [s]", "0.1 s windows", "whole toss", "at rest"):
        table.add_column(c)
    for name, m in res["methods"].items():
        cpu = f"{m['cpu_s']:.1f}" if "cpu_s" in m else "-"
        table.add_row(
            name, f"{m['wall_s']:.1f}", cpu, f"{m['window']:.4f}", f"{m['whole']:.4f}", f"{m['rest']:.4f}"
        )
    con = Console()
    con.print(table)
    r = res["ratios_vs_grid"]
    con.print(
        f"real2sim / grid: windows {r['window']:.3f}x, whole toss {r['whole']:.3f}x, rest {r['rest']:.3f}x"
    )
    r = res["pybullet_fitted_vs_defaults"]
    con.print(
        f"PyBullet fitted / PyBullet defaults: windows {r['window']:.3f}x, whole toss {r['whole']:.3f}x, "
        f"rest {r['rest']:.3f}x"
    )
    if "error" in res["sysid"]:
        con.print(f"mujoco.sysid could not fit the free body: {res['sysid']['error']}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
