import subprocess
import sys
import zipfile

import pytest

from tests.conftest import ROOT


@pytest.mark.parametrize("cwd", [ROOT, ROOT.parent])
def test_stage_packages_import_from_anywhere(cwd):
    code = "import real2sim.recon, real2sim.calibration, real2sim.export; print(real2sim.recon.__name__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "real2sim.recon"


def test_python_m_real2sim_runs_from_repo_root():
    out = subprocess.run(
        [sys.executable, "-m", "real2sim", "--version"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0 and "real2sim" in out.stdout


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory) -> list[str]:
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    # every importable folder is declared: setuptools warns (at each install) about one it would leave out
    assert "would be ignored" not in build.stderr + build.stdout, build.stderr
    (whl,) = out.glob("real2sim-*.whl")
    return zipfile.ZipFile(whl).namelist()


def test_wheel_holds_only_real2sim(wheel_names):
    names = wheel_names
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"real2sim"}
    for stage in ("recon", "calibration", "export"):
        assert f"real2sim/{stage}/__init__.py" in names
    assert any(n.startswith("real2sim/calibration/models/") and n.endswith(".xml") for n in names)


@pytest.mark.parametrize(
    "name", ["real2sim.real2sim", "real2sim.tests", "real2sim.benchmarks", "real2sim.real2sim.errors"]
)
def test_only_the_stages_map_into_real2sim(name):
    out = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode != 0 and "ModuleNotFoundError" in out.stderr


def test_one_error_class_across_stages():
    code = (
        "import real2sim, real2sim.errors, real2sim.export.config as c, real2sim.recon, real2sim.calibration;"
        "assert issubclass(c.ConfigError, real2sim.Real2SimError);"
        "assert real2sim.errors.Real2SimError is real2sim.Real2SimError; print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_only_pipeline_and_cli_import_the_stages():
    """Dependencies flow one way: core <- stages <- real2sim/twin, real2sim/pipeline <- real2sim/cli."""
    import ast

    stages = ("real2sim.recon", "real2sim.export", "real2sim.calibration")
    bad = []
    for f in sorted((ROOT / "real2sim").rglob("*.py")):
        rel = f.relative_to(ROOT / "real2sim").parts
        if rel[0] in ("pipeline", "cli", "twin"):
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            if any(n == s or n.startswith(s + ".") for n in names for s in stages):
                bad.append(f"{'/'.join(rel)}:{node.lineno}")
    assert not bad, bad


def test_wheel_holds_every_package_of_the_checkout(wheel_names):
    in_wheel = {n.rsplit("/", 1)[0] for n in wheel_names if n.endswith("/__init__.py")}
    in_tree = {str(p.parent.relative_to(ROOT)) for p in ROOT.glob("real2sim/**/__init__.py")}
    for stage in ("recon", "calibration", "export"):
        in_tree |= {
            "real2sim/" + str(p.parent.relative_to(ROOT)) for p in ROOT.glob(f"{stage}/**/__init__.py")
        }
    assert in_wheel == in_tree
