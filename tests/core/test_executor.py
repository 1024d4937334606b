import os

import pytest

from real2sim.errors import ConfigError
from real2sim.executor import ExecutorCfg, run_map


def _square_pid(x: int) -> tuple[int, int]:
    import os

    return x * x, os.getpid()


def test_local_pool_keeps_order_and_uses_processes():
    items = list(range(7))
    out = run_map(_square_pid, items, ExecutorCfg(workers=2))
    assert [v for v, _ in out] == [x * x for x in items]
    import os

    assert all(pid != os.getpid() for _, pid in out)


def test_in_process_when_one_worker():
    import os

    out = run_map(_square_pid, [3, 4], ExecutorCfg(workers=1))
    assert out == [(9, os.getpid()), (16, os.getpid())]


def test_bad_workers():
    with pytest.raises(ConfigError, match="--workers"):
        run_map(_square_pid, [1], ExecutorCfg(workers=-1))


def test_ray_gives_the_same_results_as_the_local_pool():
    ray = pytest.importorskip("ray", reason="Ray is the optional extra real2sim[ray]")
    items = [5, 1, 4]
    try:
        out = run_map(_square_pid, items, ExecutorCfg(ray="local"))
    finally:
        ray.shutdown()
    assert [v for v, _ in out] == [v for v, _ in run_map(_square_pid, items, ExecutorCfg(workers=1))]


def _start_env(_: int) -> tuple[str, int]:
    import time

    from real2sim.executor import thread_budget

    time.sleep(0.5)  # keep both workers alive so each takes one item
    # /proc/self/environ is the environment the process started with: what NumPy's BLAS saw when it loaded
    env = dict(kv.split("=", 1) for kv in open("/proc/self/environ").read().split("\0") if "=" in kv)
    return env.get("OPENBLAS_NUM_THREADS", ""), thread_budget()


@pytest.mark.skipif(not os.path.exists("/proc/self/environ"), reason="Linux /proc")
def test_workers_start_with_their_thread_share_and_the_parent_keeps_its_own(monkeypatch):
    from real2sim.executor import THREAD_VARS, thread_budget, worker_threads

    for v in THREAD_VARS:
        monkeypatch.delenv(v, raising=False)
    cores = len(os.sched_getaffinity(0))
    share = worker_threads(2, cores)
    assert run_map(_start_env, [0, 1], ExecutorCfg(workers=2)) == [(str(share), share)] * 2
    assert all(v not in os.environ for v in THREAD_VARS) and thread_budget() == cores
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert thread_budget() == 1


def _missing(path: str) -> None:
    from real2sim.errors import InputError

    raise InputError(path, "no such file")


def test_a_worker_input_error_comes_back_whole():
    """An ``InputError`` raised in a pool worker reaches the caller as the same one-line error (it pickles)."""
    from real2sim.errors import InputError

    with pytest.raises(InputError) as exc:
        run_map(_missing, ["/data/a.ply", "/data/b.ply"], ExecutorCfg(workers=2))
    assert str(exc.value) == "/data/a.ply: no such file" and exc.value.problem == "no such file"
