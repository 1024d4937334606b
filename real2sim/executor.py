"""Run independent work items (objects, sessions) on a local process pool or a Ray cluster.

Results come back in input order either way, so outputs do not depend on the executor. Threads are budgeted: each
of W local workers sizes its thread pools (OpenMP, BLAS, Open3D, CoACD) to its share of this process's cores,
``cores // W``, so W workers never run more compute threads than there are cores (workers are not pinned: on a
machine shared with other jobs the kernel still moves them to an idle core).
Work that another process is doing right now (a decomposition cache entry being computed) raises ``Busy`` when
``may_defer()``; ``run_map`` then does the other items first and waits for that one last, so workers on copies of
the same scene decompose different meshes and read each other's cache entries instead of computing one twice.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from real2sim.errors import ConfigError, StageError
from real2sim.progress import progress

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

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
        with progress(label or "working", total=len(items)) as advance:
            return _run_here(fn, items, advance)
    return _run_pool(fn, items, workers, label)


def _run_pool(fn: Callable[[Any], Any], items: list[Any], workers: int, label: str) -> list[Any]:
    """``run_map`` on ``workers`` spawned processes. On any error or signal the workers are killed at once (none
    outlives the run, and one killed parent takes its workers along: ``_worker_init``)."""
    import multiprocessing as mp  # here, not at import: the CLI reads ExecutorCfg and stays instant
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    ctx = mp.get_context("spawn")  # open3d / MuJoCo state is not fork-safe
    threads = worker_threads(workers, len(_cores()))
    pool = ProcessPoolExecutor(
        workers, mp_context=ctx, initializer=_worker_init, initargs=(threads, os.getpid())
    )
    try:
        # workers start in submit and load NumPy's BLAS before the initializer runs: the budget goes in their env;
        # Ctrl-C reaches the whole process group: the workers start with SIGINT blocked and then ignore it
        with spawn_env(threads), _blocked(signal.SIGINT):
            futures = [pool.submit(fn, x) for x in items]
        out = []
        with progress(label or "working", total=len(items)) as advance:
            for f in futures:
                out.append(f.result())
                advance()
    except BrokenProcessPool:
        _stop(pool)
        raise StageError(
            f"{label or 'working'}: a worker process died (out of memory or killed); "
            "rerun with --workers 1 to run in this process"
        ) from None
    except BaseException:
        _stop(pool)
        raise
    pool.shutdown()
    return out


def _stop(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's workers now (running items are abandoned) and wait until they are gone."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:
        with contextlib.suppress(Exception):
            p.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        with contextlib.suppress(Exception):
            p.join(10)


@contextlib.contextmanager
def _blocked(sig: signal.Signals) -> Iterator[None]:
    """``sig`` held back in this thread (and in processes started meanwhile, which inherit the mask)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {sig})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal this process gets when its parent dies."""


def _worker_init(threads: int, parent: int) -> None:
    """Pool worker start: ignore Ctrl-C (the parent stops the run), die with the parent, budget the threads."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    die_with_parent(parent)
    budget_threads(threads)


def die_with_parent(parent: int) -> None:
    """End this process when process ``parent`` ends, even by ``kill -9`` (Linux: ``PR_SET_PDEATHSIG``; elsewhere
    a thread watching the parent id)."""
    armed = False
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            armed = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL)) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:  # it died before the signal was armed
        os._exit(1)
    if not armed:
        import threading
        import time

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)

        threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def _run_here(fn: Callable[[Any], Any], items: list[Any], advance: Callable[[], None]) -> list[Any]:
    """Run the items in this process: first each that is not ``Busy``, then those that were, waiting for them."""
    out: list[Any] = [None] * len(items)
    later = []
    token = _DEFER.set(True)
    try:
        for i, x in enumerate(items):
            try:
                out[i] = fn(x)
                advance()
            except Busy:
                later.append(i)
        _DEFER.set(False)
        for i in later:  # what another process was computing: wait for it now (then it is in the cache)
            out[i] = fn(items[i])
            advance()
    finally:
        _DEFER.reset(token)
    return out


THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS")  # fmt: skip
"""Thread-pool sizes the native libraries read at load time (Open3D and CoACD use OpenMP)."""
PASSED_TO_RAY = ("REAL2SIM_CACHE",)
"""Environment variables of this process that Ray's workers get too."""
_DEFER: contextvars.ContextVar[bool] = contextvars.ContextVar("defer", default=False)


class Busy(Exception):  # noqa: N818 - a signal, not an error
    """Raised by work another process is doing right now, when ``may_defer()``: ``run_map`` retries it last."""


def may_defer() -> bool:
    """Whether the item running now may raise ``Busy`` (it runs in ``run_map``'s first pass) instead of waiting."""
    return _DEFER.get()


def _cores() -> set[int]:
    return os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))


def worker_threads(workers: int, cores: int) -> int:
    """Threads each of ``workers`` pool workers gets on ``cores`` cores (at least one)."""
    return max(1, cores // max(1, workers))


def thread_budget() -> int:
    """Threads this process's own parallel loops may use: a pool worker's share (``budget_threads``, or
    ``OMP_NUM_THREADS`` set by the user), else all of this process's cores."""
    cores = len(_cores())
    v = os.environ.get("OMP_NUM_THREADS", "")
    return max(1, min(cores, int(v))) if v.isdigit() and int(v) > 0 else cores


@contextlib.contextmanager
def spawn_env(threads: int) -> Iterator[None]:
    """The thread-pool variables set to ``threads`` while worker processes are spawned (they inherit them)."""
    old = {v: os.environ.get(v) for v in THREAD_VARS}
    for v in THREAD_VARS:
        os.environ[v] = str(threads)
    try:
        yield
    finally:
        for v, x in old.items():
            if x is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = x


def budget_threads(threads: int) -> None:
    """Size this process's thread pools to ``threads`` (environment for libraries not loaded yet, Open3D if it is)."""
    for var in THREAD_VARS:
        os.environ[var] = str(threads)
    o3d = sys.modules.get("open3d")
    if o3d is not None and hasattr(o3d.utility, "set_num_threads"):
        o3d.utility.set_num_threads(threads)


def _ray_call(fn: Callable[[Any], Any], x: Any) -> Any:
    """``fn(x)`` in a Ray task, its thread pools sized to the CPUs Ray gave it."""
    import ray

    cpus = ray.get_runtime_context().get_assigned_resources().get("CPU", 1.0)
    budget_threads(max(1, int(cpus)))
    return fn(x)


def _run_ray(fn: Callable[[Any], Any], items: list[Any], address: str, label: str) -> list[Any]:
    try:
        import ray
    except ImportError:
        raise ConfigError("--ray needs Ray: pip install 'real2sim[ray]'") from None
    if not ray.is_initialized():
        # Ray's workers inherit the environment of `ray start`, not this process's: the cache folder goes along
        env = {k: os.environ[k] for k in PASSED_TO_RAY if k in os.environ}
        ray.init(
            address=None if address == "local" else address,
            ignore_reinit_error=True,
            log_to_driver=False,
            runtime_env={"env_vars": env} if env else None,
        )
    remote = ray.remote(num_cpus=1)(_ray_call)
    refs = [remote.remote(fn, x) for x in items]
    out = []
    with progress(label or "working (ray)", total=len(items)) as advance:
        for r in refs:
            out.append(ray.get(r))
            advance()
    return out
