"""`real2sim recon photos` error paths: photos that do not overlap, --splat without nerfstudio."""

from __future__ import annotations

import shutil

import cv2
import numpy as np
from click.testing import CliRunner

from real2sim.cli import cli


def test_no_overlap_is_one_error_line(tmp_path):
    rng = np.random.default_rng(0)
    d = tmp_path / "photos"
    d.mkdir()
    for i in range(4):  # unrelated textures: features everywhere, nothing in common
        img = cv2.resize(
            rng.uniform(0, 255, (60, 80)).astype(np.float32), (320, 240), interpolation=cv2.INTER_CUBIC
        )
        cv2.imwrite(str(d / f"img_{i}.png"), np.clip(img, 0, 255).astype(np.uint8))
    r = CliRunner().invoke(cli, ["recon", "photos", str(d), "-o", str(tmp_path / "out"), "--poses-only"])
    assert r.exit_code == 1, r.output
    assert r.output.startswith("error: ") and "overlap" in r.output, r.output
    assert r.output.strip().count("\n") == 0
    assert not (tmp_path / "out").exists()


def test_splat_without_nerfstudio_says_what_to_install(tmp_path, shared_data, monkeypatch):
    src = shared_data / "photos" / "temple_ring"
    d = tmp_path / "temple"
    d.mkdir()
    for n in ("templeR0013.png", "templeR0014.png", "templeR0015.png", "templeR0016.png"):
        shutil.copy(src / n, d)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no ns-train / ns-export
    r = CliRunner().invoke(cli, ["recon", "photos", str(d), "-o", str(tmp_path / "out"), "--poses-only", "--splat",
                                 "--intrinsics", str(src / "templeR_par.txt")])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "nerfstudio is not installed" in r.output and "pip install nerfstudio" in r.output
    assert r.output.strip().count("\n") == 0
    # The dataset for training elsewhere is still written.
    assert (tmp_path / "out" / "nerfstudio" / "transforms.json").is_file()
    assert (tmp_path / "out" / "cameras.json").is_file()
