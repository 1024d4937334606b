"""Stage reuse for ``process``: the content key of a stage's inputs and options, and the ``run.json`` record.

A stage is reused when its output exists and ``run.json`` records the same key (inputs' bytes + options +
real2sim version).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
import typing
from pathlib import Path
from typing import Any

from real2sim import __version__
from real2sim.atomic import write_json
from real2sim.provenance import sha256_file

HASHED_PATH = "hashed_path"
"""Field metadata key: a path field that stays in the options hash (``field(metadata={HASHED_PATH: True})``)."""


def _hash_paths(paths: list[Path]) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in paths:
        if p.is_dir():
            for f in sorted(q for q in p.rglob("*") if q.is_file()):
                out[str(f.relative_to(p.parent))] = sha256_file(f)
        elif p.is_file():
            out[p.name] = sha256_file(p)
    return out


def stage_key(stage: str, inputs: list[Path], options: dict[str, Any]) -> str:
    """sha256 of the stage name, the real2sim version, the bytes of ``inputs`` and ``options``."""
    blob = json.dumps(
        {"stage": stage, "version": __version__, "inputs": _hash_paths(inputs), "options": options},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _is_path_type(tp: Any) -> bool:
    """``Path``, ``Path | None`` or ``tuple[Path, ...]``."""
    if tp is Path:
        return True
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return bool(args) and all(_is_path_type(a) for a in args)
    if origin is tuple:
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        return bool(args) and all(a is Path for a in args)
    return False


def path_fields(cls: type) -> tuple[str, ...]:
    """The fields of config dataclass ``cls`` that hold file or folder paths (from their annotations)."""
    hints = typing.get_type_hints(cls)
    return tuple(f.name for f in dataclasses.fields(cls) if _is_path_type(hints[f.name]))


def _kept_in_hash(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(cls) if f.metadata.get(HASHED_PATH))


def hashed_options(cfg: Any) -> dict[str, Any]:
    """``cfg`` as a dict without its paths: inputs are covered by their content hashes, and where the output
    goes does not change it."""
    d = dataclasses.asdict(cfg)
    kept = _kept_in_hash(type(cfg))
    for k in path_fields(type(cfg)):
        if k not in kept:
            d.pop(k)
    d.pop("overwrite", None)  # where the output may go does not change it either
    return d


class RunRecord:
    """``OUT/run.json``: for each finished stage its key, output folder name and summary (JSON)."""

    def __init__(self, path: Path):
        self.path = path
        self.data: dict[str, Any] = {"stages": {}}
        if path.is_file():
            try:
                self.data = json.loads(path.read_text())
            except json.JSONDecodeError:
                self.data = {"stages": {}}

    def finished(self, stage: str, key: str) -> dict[str, Any] | None:
        """The recorded summary of ``stage`` if it finished with this ``key``, else None."""
        prev = self.data["stages"].get(stage)
        if prev and prev.get("key") == key:
            return prev.get("summary", {})
        return None

    def record(self, stage: str, key: str, output: Path, summary: dict[str, Any]) -> None:
        """Note ``stage`` as finished and rewrite ``run.json`` atomically."""
        self.data["stages"][stage] = {"key": key, "output": output.name, "summary": summary}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json(self.path, self.data)
