"""The house is walkable: no import hook, no import cycles (imports deferred into functions and those under
``if TYPE_CHECKING:`` count), no private name imported from another module, each stage grouped into sub-packages,
no module over 400 lines."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

STAGES = {"recon": "real2sim.recon", "export": "real2sim.export", "calibration": "real2sim.calibration"}
MAX_LINES = 400
TOP_LEVEL = {
    "recon": {"__init__.py"},
    "export": {"__init__.py", "config.py", "package.py", "validate.py"},
    "calibration": {"__init__.py", "config.py", "run.py"},
}
"""The modules each stage's top level may hold: its ``__init__``, its config and its run entry points."""


def _modules() -> dict[str, Path]:
    """Every first-party module by its import name (benchmarks by their script names: that folder is on sys.path
    when they run)."""
    mods: dict[str, Path] = {}
    roots = {"real2sim": "real2sim", **STAGES}
    for folder, prefix in roots.items():
        for p in sorted((ROOT / folder).rglob("*.py")):
            parts = [x for x in p.relative_to(ROOT / folder).with_suffix("").parts if x != "__init__"]
            mods[".".join([prefix, *parts])] = p
    for p in sorted((ROOT / "benchmarks").glob("*.py")):
        mods[p.stem] = p
    return mods


def imported_names(tree: ast.AST, package: str, mods: set[str] | dict[str, Path]) -> set[str]:
    """The dotted names a module's imports name anywhere in its body, ``if TYPE_CHECKING:`` blocks and function
    bodies included (``from pkg import name`` also names ``pkg``, whose ``__init__`` defines the name, unless
    ``pkg.name`` is a module)."""
    names: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            names |= {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            base = n.module or ""
            if n.level:
                up = package.split(".")[: len(package.split(".")) - (n.level - 1)]
                base = ".".join(up + ([n.module] if n.module else []))
            subs = {f"{base}.{a.name}" for a in n.names}
            names |= subs
            if not subs <= set(mods):
                names.add(base)
    return names


def import_graph() -> dict[str, set[str]]:
    """Module -> the first-party modules it imports anywhere in its body (a package's ``__init__`` counts as a
    module: importing ``a.b.c`` runs ``a.b``)."""
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for d in imported_names(tree, package, mods):
            while d and d not in mods:
                d = d.rpartition(".")[0]
            if d and d != name:
                deps.add(d)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_cycle_finder_finds_a_deferred_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles():
    graph = import_graph()
    assert "real2sim.recon.pointcloud.run" in graph and "bench_simcost" in graph
    assert cycles(graph) == []


def test_a_type_only_import_is_an_edge():
    """An import under ``if TYPE_CHECKING:`` counts: a reader and an editor still bounce between the two files."""
    code = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from real2sim.errors import InputError\n"
    assert "real2sim.errors.InputError" in imported_names(ast.parse(code), "real2sim", {"real2sim.errors"})


def private_imports() -> list[str]:
    """``from MODULE import _name`` where MODULE is first-party (real2sim, its stages, benchmarks, tests)."""
    first_party = ("real2sim", "tests", *(p.stem for p in (ROOT / "benchmarks").glob("*.py")))
    bad = []
    for folder in ("real2sim", *STAGES, "benchmarks", "tests"):
        for p in sorted((ROOT / folder).rglob("*.py")):
            for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
                if isinstance(n, ast.ImportFrom) and (
                    n.level or (n.module or "").split(".")[0] in first_party
                ):
                    bad += [
                        f"{p.relative_to(ROOT)}:{n.lineno} {a.name}"
                        for a in n.names
                        if a.name.startswith("_") and not a.name.startswith("__")
                    ]
    return bad


def test_no_private_name_imported_from_another_module():
    """What another module needs is part of an interface and has a public name (benchmarks and tests included)."""
    assert private_imports() == []


def test_no_import_hook():
    for p in [*(ROOT / "real2sim").rglob("*.py"), *(ROOT / s for s in STAGES)]:
        if p.is_file():
            text = p.read_text(encoding="utf-8")
            assert "meta_path" not in text and "path_hooks" not in text, p
    for stage in STAGES:
        link = ROOT / "real2sim" / stage
        assert link.is_symlink() and link.resolve() == (ROOT / stage).resolve()


def test_stages_hold_only_subpackages_config_and_entry_points():
    for stage, allowed in TOP_LEVEL.items():
        top = {p.name for p in (ROOT / stage).iterdir() if p.suffix == ".py"}
        assert top == allowed, (stage, sorted(top - allowed))
        for d in sorted((ROOT / stage).iterdir()):
            if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py")):
                init = d / "__init__.py"
                assert init.is_file(), d
                assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), (
                    f"{init} has no docstring"
                )


def test_no_module_over_400_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for folder in ("real2sim", *STAGES)
        for p in (ROOT / folder).rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, long
