"""Run independent work items (objects, sessions) on a local process pool or a Ray cluster.

Results come back in input order either way, so outputs do not depend on the executor.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from real2sim.errors import ConfigError
from real2sim.progress import progress

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class ExecutorCfg:
    workers: int = 0
    """Local worker processes; 0 = one per core (at most one per item), 1 = run in this process."""
    ray: str | None = None
    """None: local pool. ``"local"``: start Ray on this machine; ``"auto"`` or an address (``ray://host:10001``): join a cluster (extra ``real2sim[ray]``)."""

    def validate(self) -> None:
        if self.workers < 0:
            raise ConfigError(f"--workers must be >= 0, got {self.workers}")

    def pool_size(self, items: int) -> int:
        """Local worker processes ``run_map`` uses for ``items`` work items (1: in this process)."""
        return max(1, min(self.workers or (os.cpu_count() or 1), items))


def run_map(
    fn: Callable[[T], R], items: Iterable[T], cfg: ExecutorCfg = ExecutorCfg(), label: str = ""
) -> list[R]:
    """``[fn(x) for x in items]`` in parallel; ``fn`` must be a picklable top-level function."""
    cfg.validate()
    items = list(items)
    if not items:
        return []
    if cfg.ray:
        return _run_ray(fn, items, cfg.ray, label)
    workers = cfg.pool_size(len(items))
    if workers <= 1:
        out = []
        with progress(label or "working", total=len(items)) as advance:
            for x in items:
                out.append(fn(x))
                advance()
        return out
    ctx = mp.get_context("spawn")  # open3d / MuJoCo state is not fork-safe
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = [pool.submit(fn, x) for x in items]
        out = []
        with progress(label or "working", total=len(items)) as advance:
            for f in futures:
                out.append(f.result())
                advance()
        return out


def _run_ray(fn: Callable[[Any], Any], items: list[Any], address: str, label: str) -> list[Any]:
    try:
        import ray
    except ImportError:
        raise ConfigError("--ray needs Ray: pip install 'real2sim[ray]'") from None
    if not ray.is_initialized():
        ray.init(
            address=None if address == "local" else address, ignore_reinit_error=True, log_to_driver=False
        )
    remote = ray.remote(fn)
    refs = [remote.remote(x) for x in items]
    out = []
    with progress(label or "working (ray)", total=len(items)) as advance:
        for r in refs:
            out.append(ray.get(r))
            advance()
    return out
