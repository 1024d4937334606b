"""Shared fixtures: the real datasets in ../shared/data (skipped with a reason only when that folder is absent)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

# Headless rendering for every test module, including those that import mujoco before real2sim.
if not os.environ.get("DISPLAY"):
    os.environ.setdefault("MUJOCO_GL", "egl")
    os.environ.setdefault("PYOPENGL_PLATFORM", "egl")

import pytest


def _budget_worker_threads() -> None:
    """An xdist worker sizes its thread pools (OpenMP, BLAS: Open3D, CoACD, NumPy) to its share of the cores, as
    ``run_map``'s pool workers do: N workers with a thread team per core each would oversubscribe the cores, and
    OpenMP teams then wait at their barriers on descheduled threads (docs/speed.md). The tests pass at any thread
    count, as they must on a one-core machine."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if workers <= 1 or "OMP_NUM_THREADS" in os.environ:
        return  # not a worker of a parallel run, or the user chose
    from real2sim.executor import budget_threads, worker_threads

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    budget_threads(worker_threads(workers, cores))


_budget_worker_threads()


ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
SAMPLE_DATA = ROOT / "sample_data"

T = TypeVar("T")


def shared_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder of this test run that every xdist worker sees (the run's base temp folder, above the workers'
    own); a fresh temporary folder without xdist."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return tmp_path_factory.mktemp(name)
    path = tmp_path_factory.getbasetemp().parent / "shared" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def run_once(tmp_path_factory: pytest.TempPathFactory, name: str, compute: Callable[[Path], T]) -> T:
    """``compute(folder)`` once per test run for a session fixture that several test files use: under xdist the
    first worker to ask computes it in a shared folder and pickles its value, the others wait for it (a file lock)
    and read the value back, so an expensive reconstruction or export is not repeated per worker. The value's
    files are read-only to the tests, as a session fixture's always were."""
    root = shared_dir(tmp_path_factory, name)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return compute(root)
    with _locked(root.parent / f"{name}.lock"):
        done = root / "value.pickle"
        if done.is_file():
            return pickle.loads(done.read_bytes())
        value = compute(root / "out")
        tmp = root / "value.pickle.tmp"
        tmp.write_bytes(pickle.dumps(value))
        tmp.replace(done)
        return value


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(
            f"real datasets not present at {SHARED_DATA} (they live beside the repo as ../shared/data)"
        )
    return SHARED_DATA


@pytest.fixture(scope="session")
def sample_data() -> Path:
    assert (SAMPLE_DATA / "ground_truth.json").is_file(), (
        "sample_data/ is committed; regenerate it if missing"
    )
    return SAMPLE_DATA


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory, sample_data: Path) -> tuple[Path, str, Path]:
    """``real2sim demo`` on the sample session, once per test run: (its output folder, what it printed, a copy of its
    package that tests only read: the demo's own folder is rewritten by the tests of the demo)."""
    import shutil

    def compute(root: Path) -> tuple[Path, str, Path]:
        from click.testing import CliRunner

        from real2sim.cli import cli

        out = root / "out"
        r = CliRunner().invoke(cli, ["-q", "demo", "-o", str(out), "--sample", str(sample_data)])
        assert r.exit_code == 0, r.output
        shutil.copytree(out / "package", root / "package")
        return out, r.output, root / "package"

    return run_once(tmp_path_factory, "demo", compute)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker per core this process may use, at most 4 (each worker holds Open3D, MuJoCo and a
    scene in memory, and the tests' own stages use the cores too)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, 4))
