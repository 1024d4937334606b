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
