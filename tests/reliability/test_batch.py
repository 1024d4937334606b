"""Scale-out: each of W workers sizes its thread pools to cores / W, a cache entry another process is computing is
done last (``Busy``) instead of twice, and a batch of sessions gives the same bytes on 1 and 2 workers
(``benchmarks/bench_batch.py --quick``; the full figure is the benchmark's)."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace

import pytest
import trimesh

from real2sim.executor import Busy, ExecutorCfg, may_defer, run_map, worker_threads
from real2sim.export.collision.cache import cache_key, save
from real2sim.export.collision.geometry import collision_geometry
from real2sim.export.config import ExportCfg
from tests.helpers.bench import run_bench

CALLS: list[tuple[int, bool]] = []
BUSY_ONCE = {2}


def _record(x: int) -> int:
    CALLS.append((x, may_defer()))
    if x in BUSY_ONCE and may_defer():
        raise Busy(str(x))
    return 10 * x


def test_a_busy_item_runs_after_the_others_and_results_keep_their_order():
    CALLS.clear()
    assert run_map(_record, [1, 2, 3], ExecutorCfg(workers=1)) == [10, 20, 30]
    assert CALLS == [(1, True), (2, True), (3, True), (2, False)]


def _budget(_: int) -> tuple[str, int]:
    from real2sim.export.collision.coacd import coacd_threads

    time.sleep(0.5)  # keep both workers alive so each takes one item
    return os.environ.get("OMP_NUM_THREADS", ""), coacd_threads(1)


def test_two_workers_each_get_half_the_cores_for_their_threads():
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    share = worker_threads(2, cores)
    assert run_map(_budget, [0, 1], ExecutorCfg(workers=2)) == [(str(share), share)] * 2
    assert [worker_threads(w, 2) for w in (1, 2, 3)] == [2, 1, 1]


def _collision(args):
    mesh, cfg = args
    return collision_geometry(mesh, cfg)


def test_an_entry_another_process_is_computing_is_read_not_recomputed(tmp_path):
    """Another run holds the entry's lock, then writes the entry: our object is done after the others, from the
    cache; without deferral (``entry_lock`` outside ``run_map``) the wait blocks."""
    import fcntl

    cfg = replace(ExportCfg(workers=1), cache_dir=tmp_path)
    box, cyl = trimesh.creation.box((0.1, 0.2, 0.3)), trimesh.creation.cylinder(0.03, 0.1, sections=24)
    path = tmp_path / f"{cache_key(box, cfg)}.npz"
    fd = os.open(path.with_name(path.name + ".lock"), os.O_CREAT | os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    entry = collision_geometry(box, replace(cfg, cache_dir=tmp_path / "other"))

    def other_run() -> None:
        time.sleep(1.0)
        save(path, entry)
        os.unlink(path.with_name(path.name + ".lock"))
        os.close(fd)

    threading.Thread(target=other_run).start()
    t = time.perf_counter()
    box_col, cyl_col = run_map(_collision, [(box, cfg), (cyl, cfg)], ExecutorCfg(workers=1))
    assert time.perf_counter() - t > 0.8
    assert box_col.cached and not cyl_col.cached  # read, not computed twice
    assert sorted(p.suffix for p in tmp_path.iterdir() if p.is_file()) == [".npz", ".npz"]


@pytest.mark.slow
def test_a_batch_gives_the_same_bytes_on_one_and_two_workers():
    out = run_bench("bench_batch.py").stdout
    assert "identical in all 2 runs: True" in out
