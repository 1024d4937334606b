"""Shared fixtures: the real datasets in ../shared/data (skipped with a reason only when that folder is absent)."""

from __future__ import annotations

from pathlib import Path

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
