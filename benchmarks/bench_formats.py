"""Per-format write and check times of a package, for the export benchmark (``bench_export.py``'s second table).

Write times are export's own stage timings (``write models`` is the MJCF, ``write urdf`` the scene's and the objects' URDFs); check times
are each engine check (``export.checks.engines``) run once more on the written package, MuJoCo's being export's
``validate`` stage (which also runs the usd-core and urdf2webots checks, while MuJoCo steps).
"""

from __future__ import annotations

import time
from pathlib import Path

WRITE_STAGES = {"mjcf": "write models", "urdf": "write urdf", "usd": "write usd"}
"""Column -> export's timing stage."""


def format_times(
    pkg_dir: Path, stages: dict[str, float], engines: tuple[str, ...]
) -> dict[str, float | None]:
    """``write <format>`` and ``check <engine>`` seconds (None where not run) of the package in ``pkg_dir``."""
    import mujoco

    from real2sim.export.checks.engines import ENGINES, engine_checks
    from real2sim.export.writers.manifest import PackageManifest

    out: dict[str, float | None] = {f"write {k}": stages.get(v) for k, v in WRITE_STAGES.items()}
    out["check mjcf"] = stages.get("validate")
    model = mujoco.MjModel.from_xml_path(str(pkg_dir / "scene.xml"))
    man = PackageManifest.from_json(pkg_dir)
    for e in ENGINES:
        if e not in engines:
            out[f"check {e}"] = None
            continue
        t = time.perf_counter()
        checks = engine_checks(pkg_dir, man, model, (e,), man.max_hull_vertices)
        secs = time.perf_counter() - t
        out[f"check {e}"] = None if any(c.name.endswith("(skipped)") for c in checks) else round(secs, 3)
    return out


def print_format_table(rows: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    ours = [r for r in rows if r.get("formats")]
    if not ours:
        return
    cols = list(ours[0]["formats"])
    t = Table(title="per-format write and check times [s] (- = not run: Newton's is skipped with --quick)")
    for c in ["mesh", *cols]:
        t.add_column(c)
    for r in ours:
        t.add_row(r["mesh"], *("-" if r["formats"][c] is None else f"{r['formats'][c]:.3f}" for c in cols))
    Console(width=190).print(t)
