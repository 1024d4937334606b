"""``PackageManifest``: ``export.json`` round-trips the part validation needs; a bad file is an ``InputError``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from real2sim.errors import InputError
from real2sim.export.writers.manifest import MANIFEST_FILE, ManifestObject, PackageManifest


def test_export_json_round_trips(tmp_path: Path) -> None:
    man = PackageManifest(
        "synth",
        32,
        64,
        (
            ManifestObject("a", "A", "dynamic", 0.1, "box", ("w",)),
            ManifestObject("b", "b", "static", 2.0, "3 hulls"),
        ),
        urdf=True,
        inputs={"scene.json": "00"},
        tools={"mujoco": "1"},
        options={"seed": 0},
    )
    (tmp_path / MANIFEST_FILE).write_text(man.to_json(), encoding="utf-8")
    (tmp_path / "synth.urdf").write_text("", encoding="utf-8")
    back = PackageManifest.from_json(tmp_path)
    bare = tuple(ManifestObject(o.name, o.label, o.role) for o in man.objects)
    assert back == replace(man, objects=bare, inputs={}, tools={}, options={})
    assert back.to_json() == man.to_json()


@pytest.mark.parametrize("text", [None, "{", '{"name": "x"}'])
def test_a_missing_or_bad_manifest_is_an_input_error(tmp_path: Path, text: str | None) -> None:
    if text is not None:
        (tmp_path / MANIFEST_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(InputError):
        PackageManifest.from_json(tmp_path)
