"""Shared fixtures: the real datasets in ../shared/data (skipped with a reason only when that folder is absent)."""

from __future__ import annotations

import os
from pathlib import Path

# Headless rendering for every test module, including those that import mujoco before real2sim.
if not os.environ.get("DISPLAY"):
    os.environ.setdefault("MUJOCO_GL", "egl")
    os.environ.setdefault("PYOPENGL_PLATFORM", "egl")

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
SAMPLE_DATA = ROOT / "sample_data"


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
