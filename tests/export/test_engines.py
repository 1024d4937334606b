"""The package in the engines it is written for, on the real OSD test12 scan: Newton (CPU) imports the USD with
MuJoCo's bodies and masses and bodies dropped 5 mm come back to rest; PyBullet does the same with the per-object
URDFs against MuJoCo's resting poses; urdf2webots converts one; a missing client is one skip line."""

from __future__ import annotations

import importlib.util

import pytest

from real2sim.export.checks.engines import ENGINES, EXPORT_ENGINES, engine_checks
from real2sim.export.config import ExportCfg
from real2sim.export.writers.manifest import PackageManifest


def _run(pkg, engines):
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(pkg.scene_xml))
    return engine_checks(pkg.path, PackageManifest.from_json(pkg.path), model, engines, 64)


def test_pybullet_object_urdfs_come_back_to_mujocos_rest_on_osd_test12(osd12_package):
    pytest.importorskip("pybullet")
    rest = _run(osd12_package, ("pybullet",))
    assert [c.name for c in rest] == [f"pybullet rest object_{i}" for i in (1, 2, 3)]
    assert all(c.passed and c.value < 2e-3 for c in rest), rest  # vs MuJoCo's resting pose: ~1 mm (margin)


def test_export_runs_usd_and_urdf2webots_checks(osd12_package):
    pytest.importorskip("urdf2webots")
    checks = {c.name: c for c in osd12_package.checks}
    assert checks["urdf2webots converts object_1.urdf"].passed and checks["usd physics schema"].passed
    assert ExportCfg().validate_cfg.engines == EXPORT_ENGINES
    assert not any(n.startswith(("newton", "pybullet")) for n in checks)  # `real2sim validate` runs those


def test_urdf2webots_check_reads_the_same_wherever_the_package_is(osd12_package, tmp_path):
    """The PROTO's header names the input path (a staging folder of random name while a package is written): the
    check's detail must not depend on it (same input, same package bytes)."""
    import shutil

    from real2sim.export.checks.webots import webots_checks

    pytest.importorskip("urdf2webots")
    details = []
    for name in ("p", "p" * 120):
        shutil.copytree(osd12_package.path, tmp_path / name)
        (check,) = webots_checks(tmp_path / name / "urdf" / "object_1.urdf")
        assert check.passed, check
        details.append(check.detail)
    assert details[0] == details[1]


@pytest.mark.slow
def test_newton_imports_osd_test12_usd_and_bodies_come_back_to_rest(osd12_package):
    pytest.importorskip("newton")
    checks = _run(osd12_package, ("newton",))
    imported = checks[0]
    assert imported.name == "newton imports usd" and imported.passed, imported
    assert imported.detail.startswith("3 bodies (MJCF 3 dynamic)") and imported.value <= 1e-4
    rest = checks[1:]
    assert len(rest) == 3 and all(c.passed and c.value < 2e-3 for c in rest), rest


def test_a_missing_client_is_one_skip_line(synthetic_package, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("newton", "pybullet") else real(name, *a),
    )
    checks = _run(synthetic_package, ("newton", "pybullet"))
    assert [c.name for c in checks] == ["pybullet", "newton"]
    assert all(c.skipped and not c.passed and not c.failed for c in checks)
    assert all(c.result == "skipped" and "pip install 'real2sim[engines]'" in c.detail for c in checks)
    assert set(ENGINES) == {"usd", "pybullet", "webots", "newton"}
    # the package README and report show them as skipped, never as passed
    import dataclasses

    from real2sim.export.report.pages import readme_md, report_html

    man = dataclasses.replace(PackageManifest.from_json(synthetic_package.path), objects=())
    readme = readme_md(man, tuple(checks))
    assert (
        "| pybullet | skipped |" in readme and "| newton | skipped |" in readme and "| pass |" not in readme
    )
    html = report_html(man, tuple(checks), [])
    assert html.count("<td>skipped</td>") == 2 and "<td>pass</td>" not in html


def test_unknown_engine_is_a_config_error():
    from real2sim.errors import ConfigError
    from real2sim.export.config import ValidateCfg

    with pytest.raises(ConfigError, match="engines must be among"):
        ValidateCfg(engines=("isaac",)).validate()


def test_validate_json_prints_only_our_output(osd12_package):
    """`real2sim validate --json` with every engine: valid JSON on stdout, nothing from the engines' own code."""
    import json
    import subprocess
    import sys

    for mod in ("pybullet", "newton", "pxr"):
        pytest.importorskip(mod)
    out = subprocess.run(
        [sys.executable, "-m", "real2sim", "validate", str(osd12_package.path), "--json"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    names = [c["name"] for c in json.loads(out.stdout)]
    assert {"usd physics schema", "newton imports usd", "pybullet rest object_1"} <= set(names)
