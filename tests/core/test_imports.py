"""The house is walkable: no import hook, no import cycles (imports deferred into functions count; those under
``if TYPE_CHECKING:`` do not), ``recon/`` grouped into sub-packages, no module over 400 lines."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

STAGES = {"recon": "real2sim.recon", "export": "real2sim.export", "calibration": "real2sim.calibration"}
MAX_LINES = 400


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


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
            out |= {id(m) for m in ast.walk(n)}
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the first-party modules it imports anywhere in its body (a package's ``__init__`` counts as a
    module: importing ``a.b.c`` runs ``a.b``)."""
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_nodes(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        names: set[str] = set()
        for n in ast.walk(tree):
            if id(n) in skip:
                continue
            if isinstance(n, ast.Import):
                names |= {a.name for a in n.names}
            elif isinstance(n, ast.ImportFrom):
                base = n.module or ""
                if n.level:
                    up = package.split(".")[: len(package.split(".")) - (n.level - 1)]
                    base = ".".join(up + ([n.module] if n.module else []))
                subs = {f"{base}.{a.name}" for a in n.names}
                names |= subs
                if not subs <= mods.keys():  # ``from pkg import name``: pkg's __init__ defines the name
                    names.add(base)
        deps = set()
        for d in names:
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


def test_no_import_hook():
    for p in [*(ROOT / "real2sim").rglob("*.py"), *(ROOT / s for s in STAGES)]:
        if p.is_file():
            text = p.read_text(encoding="utf-8")
            assert "meta_path" not in text and "path_hooks" not in text, p
    for stage in STAGES:
        link = ROOT / "real2sim" / stage
        assert link.is_symlink() and link.resolve() == (ROOT / stage).resolve()


def test_recon_holds_only_subpackages():
    top = sorted(p.name for p in (ROOT / "recon").iterdir() if p.name != "__pycache__")
    assert [n for n in top if n.endswith(".py")] == ["__init__.py"], top
    for d in (ROOT / "recon").iterdir():
        if d.is_dir() and d.name != "__pycache__":
            init = d / "__init__.py"
            assert init.is_file(), d
            assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), f"{init} has no docstring"


def test_no_module_over_400_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for folder in ("real2sim", *STAGES)
        for p in (ROOT / folder).rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, long
