"""Metric scale from a known distance between two points marked in the photos (`recon photos --known-distance`):
the sample session's box corners projected into the photos by the true cameras (rounded to 0.5 px, as a user
clicks), a real SfM run, and the scale against the truth; bad files fail at once with one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from real2sim.cli import cli
from real2sim.recon.photos.align import camera_centre, umeyama
from tests.helpers.accuracy import true_objects


def _pixels(gt: dict, point: np.ndarray, names: list[str]) -> dict[str, list[float]]:
    out = {}
    for im in gt["images"]:
        name = Path(im["file"]).name
        if name not in names:
            continue
        x = np.asarray(im["cam_from_world"])[:3] @ np.append(point, 1.0)
        uv = [im["fx"] * x[0] / x[2] + im["cx"], im["fy"] * x[1] / x[2] + im["cy"]]
        out[name] = [round(2 * v) / 2 for v in uv]
    return out


@pytest.mark.slow  # one SfM of the 24 sample photos (poses only)
def test_sample_scale_from_known_distance(sample_data: Path, tmp_path: Path) -> None:
    gt = json.loads((sample_data / "ground_truth.json").read_text())
    box = next(t for t in true_objects(sample_data) if t.name == "box")
    top = box.mesh.vertices[box.mesh.vertices[:, 2] > box.mesh.vertices[:, 2].max() - 1e-6]
    a = top[0]
    b = top[np.argmax(np.linalg.norm(top - a, axis=1))]  # the top face's diagonal
    names = sorted(Path(i["file"]).name for i in gt["images"])
    doc = [f"distance = {float(np.linalg.norm(a - b))!r}"]
    for key, p, pick in (("a", a, names[0:12:4]), ("b", b, names[2:14:4])):
        doc.append(f"[{key}]")
        doc += [f'"{n}" = [{uv[0]}, {uv[1]}]' for n, uv in _pixels(gt, p, pick).items()]
    f = tmp_path / "distance.toml"
    f.write_text("\n".join(doc) + "\n")
    out = tmp_path / "scene"
    r = CliRunner().invoke(cli, ["recon", "photos", str(sample_data / "images"), "-o", str(out), "--poses-only",
                                 "--known-distance", str(f)])  # fmt: skip
    assert r.exit_code == 0, r.output
    report = json.loads((out / "sfm_report.json").read_text())
    cams = {
        c["file"]: np.asarray(c["cam_from_world"])
        for c in json.loads((out / "cameras.json").read_text())["cameras"]
    }
    ref = {Path(i["file"]).name: np.asarray(i["cam_from_world"]) for i in gt["images"]}
    common = sorted(set(cams) & set(ref))
    s = umeyama(np.array([camera_centre(cams[n]) for n in common]),
                np.array([camera_centre(ref[n]) for n in common])).scale  # fmt: skip
    assert s == pytest.approx(1.0, abs=0.01), s  # cameras.json is metric: same size as the truth within 1 %
    rel = report["scale"]["relative_sigma"]
    assert 0 < rel < 0.02, report["scale"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("distance = -1\n[a]\nx = [1, 2]\ny = [3, 4]\n[b]\nx = [1, 2]\ny = [3, 4]\n", "positive number"),
        ("distance = 0.3\n[a]\nx = [1, 2]\n[b]\nx = [1, 2]\ny = [3, 4]\n", "two or more image names"),
        ("distance = 0.3\n[a]\nx = [1, 2]\ny = [3]\n[b]\nx = [1, 2]\ny = [3, 4]\n", "expected [u, v]"),
        ("distance = = 0.3\n", "not valid TOML"),
    ],
)
def test_bad_known_distance_file_is_one_line(
    sample_data: Path, tmp_path: Path, text: str, problem: str
) -> None:
    f = tmp_path / "d.toml"
    f.write_text(text)
    out = tmp_path / "scene"
    r = CliRunner().invoke(cli, ["recon", "photos", str(sample_data / "images"), "-o", str(out), "--poses-only",
                                 "--known-distance", str(f)])  # fmt: skip
    assert r.exit_code == 1
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and str(f) in lines[0] and problem in lines[0], (
        r.output
    )
    assert not out.exists()
