"""``replay_all``: every selected episode (and its variations) played in the twin; ``replay.json``, the traces and the
sim dataset written into the output folder."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from real2sim.atomic import dumps_json, write_text
from real2sim.progress import progress
from real2sim.twin.config import ReplayCfg
from real2sim.twin.dataset import EpisodeOut, write_dataset
from real2sim.twin.episodes import Episode, Source, read_source
from real2sim.twin.home import ids
from real2sim.twin.replay import SimTrace, simulate, stepping, tracking
from real2sim.twin.variations import draw, varied_model


@dataclass(frozen=True)
class ReplayResult:
    """What ``replay`` measured (``replay.json``) and where it wrote it."""

    path: Path | None
    report: dict
    seconds: float
    notes: tuple[str, ...] = ()
    assumption: str = ""


def _renderer(model, cameras: list[str], width: int, height: int):
    """A function data -> {camera: PNG bytes} for the twin's cameras."""
    import mujoco
    from PIL import Image

    r = mujoco.Renderer(model, height, width)

    def render(data) -> dict[str, bytes]:
        out = {}
        for cam in cameras:
            r.update_scene(data, camera=cam)
            buf = __import__("io").BytesIO()
            Image.fromarray(r.render()).save(buf, format="PNG")
            out[cam] = buf.getvalue()
        return out

    return render, r


def _features(src: Source, objects: list[str], cameras: list[str], cfg: ReplayCfg) -> dict:
    """The sim dataset's features: the input's (images and videos dropped: no real frames are replayed) plus the
    objects' poses (``observation.environment_state``) and rendered images."""
    feats: dict = {}
    if src.lerobot:
        for k, spec in (src.info.get("features") or {}).items():
            if spec.get("dtype") not in ("video", "image"):
                feats[k] = {kk: vv for kk, vv in spec.items() if kk != "info"}
    else:
        feats["action"] = {
            "dtype": "float32",
            "shape": [len(src.action_names)],
            "names": list(src.action_names),
        }
        feats["observation.state"] = {"dtype": "float32", "shape": [len(src.state_names)],
                                      "names": list(src.state_names)}  # fmt: skip
        for k, dt in (("timestamp", "float32"), ("frame_index", "int64"), ("episode_index", "int64"),
                      ("index", "int64"), ("task_index", "int64")):  # fmt: skip
            feats[k] = {"dtype": dt, "shape": [1], "names": None}
    names = [f"{o}.{c}" for o in objects for c in ("x", "y", "z", "qw", "qx", "qy", "qz")]
    feats["observation.environment_state"] = {"dtype": "float32", "shape": [len(names)], "names": names}
    if cfg.render:
        for cam in cameras:
            feats[f"observation.images.{cam}"] = {"dtype": "image", "shape": [cfg.render_height, cfg.render_width, 3],
                                                  "names": ["height", "width", "channels"]}  # fmt: skip
    return feats


def _episode_out(src: Source, ep: Episode, trace: SimTrace, feats: dict) -> EpisodeOut:
    cols: dict[str, object] = {}
    state = np.stack([u.from_radians(trace.qpos[:, j]) for j, u in enumerate(src.units)], axis=1)
    for k in feats:
        if k == "observation.state":
            cols[k] = state
        elif k == "observation.environment_state":
            cols[k] = trace.objects.reshape(len(trace.objects), -1)
        elif k.startswith("observation.images."):
            cols[k] = trace.images[k.removeprefix("observation.images.")]
        elif k == "timestamp":
            cols[k] = ep.frames.get("timestamp", ep.traj.time)
        elif k in ("frame_index", "episode_index", "index", "task_index"):
            continue  # numbered by the writer
        else:
            cols[k] = ep.frames[k]
    return EpisodeOut(cols, ep.task)


def replay_all(cfg: ReplayCfg, dest: Path | None) -> ReplayResult:
    from real2sim.twin.plots import plot_traces
    from real2sim.twin.write import load_twin

    t0 = time.perf_counter()
    twin = load_twin(cfg.twin)
    model = twin.model
    src = read_source(cfg, model, twin.robot)
    step = stepping(src.fps, float(model.opt.timestep))
    model.opt.timestep = step.timestep
    ix = ids(model, twin.robot)
    objects = list(ix.objects)
    render = None
    renderer = None
    if cfg.render:
        render, renderer = _renderer(model, list(twin.manifest.get("cameras") or []), cfg.render_width,
                                     cfg.render_height)  # fmt: skip
    feats = _features(src, objects, list(twin.manifest.get("cameras") or []), cfg)
    import mujoco

    report: dict = {"twin": str(Path(cfg.twin).resolve()), "episodes_from": str(Path(cfg.episodes).resolve()),
                    "mode": cfg.mode, "stepping": step.to_json(), "units": src.units[0].unit if src.units else "",
                    "assumption": src.assumption or None, "variations_per_episode": cfg.variations,
                    "seed": cfg.seed, "object_shift_m": cfg.object_shift, "object_yaw_deg": cfg.object_yaw,
                    "physics_ranges": {k: list(v) for k, v in twin.ranges.items()}, "episodes": []}  # fmt: skip
    out_eps: list[EpisodeOut] = []
    with progress("replaying episodes", total=len(src.episodes) * (cfg.variations + 1)) as advance:
        for ep in src.episodes:
            rng = np.random.default_rng([cfg.seed, ep.index])
            start = (np.array([model.joint(n).qposadr[0] for n in ep.traj.joint_names]), ep.traj.qpos[0])
            entry: dict = {
                "episode": ep.index,
                "frames": len(ep.traj.time),
                "task": ep.task,
                "variations": [],
            }
            varied = []
            for k in range(cfg.variations + 1):
                d = draw(model, ix, rng, k, cfg.object_shift, cfg.object_yaw, twin.ranges, start)
                m = varied_model(model, d.physics, twin.robot.prefix)
                data = mujoco.MjData(m)
                tr = simulate(m, data, ix, ep, twin.robot.prefix, step, cfg.mode, cfg.resync_every,
                              d.object_start, render)  # fmt: skip
                fig = tracking(ep, tr, src.joints, step.fps, cfg.max_lag)
                v = {**d.to_json(), "tracking": fig, "mujoco_warnings": tr.warnings,
                     "dataset_episode": len(out_eps)}  # fmt: skip
                v["object_states"] = _object_summary(objects, tr)
                entry["variations"].append(v)
                if k == 0:
                    entry["tracking"] = fig
                    entry["start_penetration"] = list(tr.start_contacts)
                    nominal = tr
                else:
                    varied.append(tr.qpos)
                out_eps.append(_episode_out(src, ep, tr, feats))
                advance()
            report["episodes"].append(entry)
            if dest is not None and cfg.plots:
                plot_traces(dest / f"traces_episode_{ep.index:06d}.png",
                            f"episode {ep.index}: real vs twin ({cfg.mode})", src.joints, ep.traj.time,
                            ep.traj.qpos, nominal.qpos, varied,
                            {j: entry["tracking"]["joints"][j]["rmse_rad"] for j in src.joints})  # fmt: skip
    if renderer is not None:
        renderer.close()
    rm = [e["tracking"]["mean_rmse_rad"] for e in report["episodes"]]
    report["mean_rmse_rad"] = round(float(np.mean(rm)), 9) if rm else None
    if dest is not None:
        if cfg.dataset:
            robot_type = str(src.info.get("robot_type") or twin.robot.name)
            info = write_dataset(dest / "dataset", src.fps, robot_type, feats, out_eps)
            write_text(dest / "dataset" / "meta" / "variations.json", dumps_json(_variations(report)))
            report["dataset"] = {
                "path": "dataset",
                "episodes": info["total_episodes"],
                "frames": info["total_frames"],
            }
        write_text(dest / "replay.json", dumps_json(report))
    return ReplayResult(None if cfg.out_dir is None else Path(cfg.out_dir), report, time.perf_counter() - t0,
                        src.notes, src.assumption)  # fmt: skip


def _object_summary(objects: list[str], tr: SimTrace) -> dict:
    """Per object: start and end pose and the largest displacement [m] over the episode (the per-frame poses are in
    the dataset's observation.environment_state)."""
    out = {}
    for i, n in enumerate(objects):
        p = tr.objects[:, i, :3]
        out[n] = {
            "start": [round(float(x), 9) + 0.0 for x in tr.objects[0, i]],
            "end": [round(float(x), 9) + 0.0 for x in tr.objects[-1, i]],
            "max_displacement_m": round(float(np.max(np.linalg.norm(p - p[0], axis=1))), 9),
        }
    return out


def _variations(report: dict) -> dict:
    """Which dataset episode is which real episode and variation, and what was drawn for it."""
    rows = []
    for e in report["episodes"]:
        for v in e["variations"]:
            rows.append({"dataset_episode": v["dataset_episode"], "source_episode": e["episode"],
                         "variation": v["variation"], "objects": v["objects"], "physics": v["physics"]})  # fmt: skip
    return {"seed": report["seed"], "episodes": rows}
