"""The clutter benchmark's --quick mode (OSD test21: two boxes touching, one standing on a third) runs and scores."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.bench import run_bench


def test_bench_clutter_quick(tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "clutter.json"
    run_bench("bench_clutter.py", "--out", str(out))
    row = json.loads(out.read_text())["osd"][0]
    assert row["scene"] == "test21" and row["objects_true"] == 3
    assert row["real2sim"]["objects"] == 3 and row["real2sim"]["min_iou"] >= 0.85, row
