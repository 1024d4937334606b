"""``real2sim demo``: the whole pipeline on the bundled sample session, with a summary against its ground truth."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from real2sim.matching import match_pairs
from real2sim.outguard import check_output
from real2sim.pipeline.config import DemoCfg, ProcessCfg
from real2sim.pipeline.process import ProcessResult, run_process
from real2sim.pipeline.summary import CalibrationSummary, ObjectSummary, PackageSummary, SceneSummary


def find_sample_data(explicit: Path | None = None) -> Path:
    """The sample session folder: given, ``./sample_data``, the source checkout's, or generated once into the cache."""
    if explicit is not None:
        return Path(explicit)
    for cand in (Path.cwd() / "sample_data", Path(__file__).resolve().parents[2] / "sample_data"):
        if (cand / "session.toml").is_file():
            return cand
    import os

    cache = Path(os.environ.get("REAL2SIM_CACHE", Path.home() / ".cache" / "real2sim")) / "sample_data"
    if not (cache / "session.toml").is_file():
        from real2sim.samplegen.generate import SampleGenCfg, generate

        generate(SampleGenCfg(out_dir=cache))
    return cache


@dataclass(frozen=True)
class DemoResult:
    process: ProcessResult
    seconds: float
    truth: dict[str, Any]


def run_demo(cfg: DemoCfg) -> DemoResult:
    check_output(cfg.out_dir, [cfg.sample_dir], overwrite=cfg.overwrite)  # before a sample is generated
    sample = find_sample_data(cfg.sample_dir)
    t0 = time.perf_counter()
    res = run_process(
        ProcessCfg(
            session_dir=sample,
            out_dir=cfg.out_dir,
            workers=cfg.workers,
            force=cfg.force,
            overwrite=cfg.overwrite,
        )
    )
    truth = (
        json.loads((sample / "ground_truth.json").read_text())
        if (sample / "ground_truth.json").is_file()
        else {}
    )
    return DemoResult(res, time.perf_counter() - t0, truth)


def match_objects(found: list[ObjectSummary], truth: list[dict[str, Any]]) -> list[tuple[int, int, float]]:
    """Pair reconstructed objects with true ones by nearest position (x, y) [m]: (found index, truth index, distance)."""
    if not found or not truth:
        return []
    a = np.array([f.position_m[:2] for f in found])
    b = np.array([np.asarray(t["world_from_object"])[:2, 3] for t in truth])
    return match_pairs(np.linalg.norm(a[:, None] - b[None], axis=2))


def render_summary(res: DemoResult) -> list[Any]:
    """Rich renderables summarising the demo (objects vs truth, package checks, calibration vs truth, timings)."""
    from rich.table import Table

    out: list[Any] = []
    p = res.process
    scene = p.summary("recon", SceneSummary)
    if scene is not None:
        out.append(_objects_table(list(scene.objects), res.truth.get("objects", [])))
    pkg = p.summary("export", PackageSummary)
    if pkg is not None:
        out.append(
            f"Package {p.stage('export').output}: {pkg.passed}/{len(pkg.checks)} checks passed"
            + (f", {pkg.skipped} skipped " if pkg.skipped else " ")
            + f"({pkg.mjcf}, {pkg.scene_xml}, {pkg.urdf})"
        )
    cal = p.summary("calibrate", CalibrationSummary)
    if cal is not None:
        out.extend(_calibration_lines(cal, res.truth.get("robot", {}).get("parameters", {})))
    t = Table(title="Stages")
    for c in ("stage", "output", "time [s]"):
        t.add_column(c)
    for s in p.stages:
        t.add_row(s.name, str(s.output), f"{s.seconds:.1f}" + (" (reused)" if s.reused else ""))
    t.add_row("total", str(p.out_dir), f"{res.seconds:.1f}")
    out.append(t)
    out.extend(f"note: {n}" for n in p.notes)
    return out


def _objects_table(objs: list[ObjectSummary], tobjs: list[dict[str, Any]]) -> Any:
    from rich.table import Table

    t = Table(title=f"Reconstructed objects: {len(objs)} found, {len(tobjs)} in the ground truth")
    for c in ("object", "extent [mm]", "volume [cm³]", "true object", "true volume [cm³]", "volume error"):
        t.add_column(c)
    pairs = {i: j for i, j, _ in match_objects(objs, tobjs)}
    for i, o in enumerate(objs):
        row = [o.name, " × ".join(f"{1000 * x:.0f}" for x in o.extent_m), f"{1e6 * o.volume_m3:.1f}"]
        if i in pairs:
            tv = tobjs[pairs[i]].get("volume")
            row += [
                tobjs[pairs[i]]["name"],
                f"{1e6 * tv:.1f}" if tv else "",
                f"{100 * (o.volume_m3 / tv - 1):+.1f} %" if tv else "",
            ]
        t.add_row(*(row + [""] * (6 - len(row))))
    return t


def _calibration_lines(cal: CalibrationSummary, truth: dict[str, float]) -> list[Any]:
    from rich.table import Table

    t = Table(title="Calibrated robot parameters")
    for c in ("parameter", "fitted", "± stderr", "true", "error"):
        t.add_column(c)
    for name, v in cal.parameters.items():
        tv = truth.get(name)
        err = f"{100 * (v.value / tv - 1):+.2f} %" if tv else ""
        se = f"{v.stderr:.3g}" if v.stderr is not None else "not identifiable"
        t.add_row(name, f"{v.value:.5g}", se, f"{tv:.5g}" if tv is not None else "", err)
    out: list[Any] = [t]
    out += [f"  {lg.split:8s} {Path(f).name}: qpos RMSE {lg.rmse_qpos:.4g} rad" for f, lg in cal.logs.items()]
    out += [f"  [yellow]warning:[/] {w}" for w in cal.warnings]
    return out
