"""Click options generated from the fields of a frozen ``*Cfg`` dataclass: one source for names, types, defaults
and help.

``--kebab-name`` comes from the field name (or ``Opt.decls``), the type from the annotation (``int``, ``float``,
``str``, ``Path``, ``bool`` as ``--x/--no-x``, ``Literal[...]`` as a choice, ``tuple[str, ...]`` as a comma list,
``X | None``), the default from the dataclass (shown in ``--help``) and the help from the field's docstring (its
first sentence). The command then builds the config with ``build(cls, params)``.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import math
import re
import sys
import textwrap
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Opt:
    """How one field's option differs from the generated one (existing flag spellings, repeatable options)."""

    decls: tuple[str, ...] = ()
    """Flag spellings instead of ``--kebab-name`` (a bool field's ``--x/--no-x`` pair counts as one)."""
    required: bool = False
    """No default: the option must be given."""
    multiple: bool = False
    """Repeatable (``--log A --log B``) instead of a comma list; for tuple fields."""
    commas: bool = False
    """With ``multiple``: each value may also be a comma list (``--fit a,b --fit c`` gives ``(a, b, c)``)."""
    type: click.ParamType | None = None
    """The click type, where the annotation says less than the command checks (e.g. a ``str`` with choices)."""
    metavar: str | None = None


@functools.cache
def _module_classes(path: str) -> dict[str, ast.ClassDef]:
    """The top-level classes of the Python file at ``path`` by name (each file parsed once)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def _class_node(klass: type) -> ast.ClassDef | None:
    """``klass``'s definition: from its module's file when it is defined at the top level, else its own source."""
    path = getattr(sys.modules.get(klass.__module__), "__file__", None)
    if path and path.endswith(".py") and klass.__qualname__ == klass.__name__:
        node = _module_classes(path).get(klass.__name__)
        if node is not None:
            return node
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
    except (OSError, TypeError):
        return None
    return tree.body[0] if tree.body and isinstance(tree.body[0], ast.ClassDef) else None


@functools.cache
def field_docs(cls: type) -> dict[str, str]:
    """Each field's docstring (the string literal right after it in the class body), for ``cls`` and its bases."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        node = _class_node(klass)
        body = node.body if node is not None else []
        for node, nxt in zip(body, body[1:], strict=False):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)
            ):
                docs[node.target.id] = nxt.value.value
    return docs


def first_sentence(doc: str) -> str:
    """The docstring's first sentence on one line, RST ``literals`` shown plain."""
    text = " ".join(doc.split()).replace("``", "")
    return re.split(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.!?])\s+(?=[A-Z0-9])", text, maxsplit=1)[0]


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints(cls)``, evaluated once per class (each option reads one field's)."""
    return typing.get_type_hints(cls)


def _base(tp: Any) -> Any:
    """``X`` of ``X | None``."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


def _comma_list(item: Any) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """Callback splitting ``a,b`` into a tuple; int, float and Path items are converted (str items, choices
    included, are left to the config's ``validate()``, as before)."""
    conv = _click_type(item) if item in (int, float, Path) else None

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is None or isinstance(value, tuple):
            return value
        parts = [x.strip() for x in str(value).split(",") if x.strip()]
        return tuple(conv.convert(x, param, ctx) if conv else x for x in parts)

    return callback


def _flatten_commas(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Callback of a repeatable option whose values may be comma lists: one flat tuple."""
    return tuple(x.strip() for v in value or () for x in str(v).split(",") if x.strip())


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def option(cls: type, name: str, opt: Opt = Opt()) -> Callable[[F], F]:
    """``click.option`` for field ``name`` of config dataclass ``cls``; its parameter name is the field name."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    if name not in fields:
        raise KeyError(f"{cls.__name__} has no field {name!r}; fields: {', '.join(fields)}")
    tp = _base(_hints(cls)[name])
    default = _default(fields[name])
    flag = f"--{name.replace('_', '-')}"
    kw: dict[str, Any] = {"help": first_sentence(field_docs(cls).get(name, ""))}
    if opt.required or default is dataclasses.MISSING:
        kw["required"] = True
        kw["help"] = re.sub(r";\s*None\b.*$", ".", kw["help"])  # the CLI cannot pass None
    else:
        kw.update(default=default, show_default=default != "")
    if opt.metavar:
        kw["metavar"] = opt.metavar
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is bool:
        decls = opt.decls or (f"{flag}/--no-{flag[2:]}",)
        return click.option(*decls, name, is_flag=True, **kw)
    if origin is tuple:
        item = args[0] if args else str
        if opt.multiple:
            kw.pop("show_default", None)
            kw.update(multiple=True, default=kw.get("default") or ())
            if opt.commas:
                kw["callback"] = _flatten_commas
            return click.option(*(opt.decls or (flag,)), name, type=_click_type(item), **kw)
        if "default" in kw:
            kw["default"] = ",".join(str(x) for x in kw["default"])
        return click.option(*(opt.decls or (flag,)), name, callback=_comma_list(item), **kw)
    ptype = opt.type or (click.Choice([str(a) for a in args]) if origin is Literal else _click_type(tp, name))
    return click.option(*(opt.decls or (flag,)), name, type=ptype, **kw)


class FiniteFloat(click.ParamType):
    """A float option: NaN and infinities are refused where they enter (no option of real2sim means them)."""

    name = "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        v = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(v):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return v


FINITE = FiniteFloat()
COUNTS = ("seed", "workers")
"""Integer options that count from 0 (a negative seed or worker count is refused)."""


def _click_type(tp: Any, name: str = "") -> click.ParamType:
    if tp is Path:
        return click.Path(path_type=Path)
    if tp is int and name in COUNTS:
        return click.IntRange(min=0)
    return {int: click.INT, float: FINITE, str: click.STRING}.get(tp, click.STRING)


def options(cls: type, *names: str, **custom: Opt) -> Callable[[F], F]:
    """Decorator adding one option per field in ``names`` (in that order in ``--help``), ``custom`` by field name."""

    def deco(fn: F) -> F:
        for name in reversed(names):
            fn = option(cls, name, custom.get(name, Opt()))(fn)
        return fn

    return deco


def build(cls: type, params: dict[str, Any], **values: Any) -> Any:
    """``cls`` from the command's parameters named like its fields, plus ``values``."""
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in params.items() if k in names}, **values)
