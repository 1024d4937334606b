"""Where a result came from: input hashes, tool versions and options, without timestamps (outputs stay byte-stable)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

_TOOLS = ("real2sim", "numpy", "scipy", "open3d", "trimesh", "pycolmap", "coacd", "mujoco", "manifold3d")


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tool_versions(names: tuple[str, ...] = _TOOLS) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            if name == "real2sim":
                from real2sim import __version__

                out[name] = __version__
    return out


@dataclass(frozen=True)
class Provenance:
    """Inputs (file name -> sha256), the steps run, tool versions and the options that shaped a result."""

    inputs: dict[str, str] = field(default_factory=dict)
    steps: tuple[str, ...] = ()
    tools: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def for_inputs(paths: list[str | Path], steps: tuple[str, ...], options: dict[str, Any]) -> Provenance:
        return Provenance(
            inputs={Path(p).name: sha256_file(p) for p in paths},
            steps=tuple(steps),
            tools=tool_versions(),
            options=dict(options),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "inputs": dict(self.inputs),
            "steps": list(self.steps),
            "tools": dict(self.tools),
            "options": dict(self.options),
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> Provenance:
        return Provenance(
            inputs=dict(d.get("inputs", {})),
            steps=tuple(d.get("steps", ())),
            tools=dict(d.get("tools", {})),
            options=dict(d.get("options", {})),
        )
