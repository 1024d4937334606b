"""The files a spec refers to (meshes, textures, height fields, skins): copied into the twin's ``assets/`` and the
spec pointed at the copies, so that the twin folder is self-contained and its ``scene.xml`` loads from anywhere."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from real2sim.errors import InputError


@dataclass(frozen=True)
class AssetFile:
    """One referenced file: the spec element holding it, where it came from and its path under ``assets/``."""

    element: Any
    source: Path
    rel: str


def _elements(spec) -> list[tuple[Any, str]]:
    """(element, the spec folder its relative file is read from) for every element with a file."""
    out: list[tuple[Any, str]] = []
    for m in spec.meshes:
        out.append((m, spec.meshdir))
    for h in spec.hfields:
        out.append((h, spec.meshdir))
    for s in spec.skins:
        out.append((s, spec.meshdir))
    for t in spec.textures:
        out.append((t, spec.texturedir))
    return [(e, d) for e, d in out if getattr(e, "file", "")]


def _source(spec, element, folder: str, where: Path) -> Path:
    f = Path(element.file)
    if not f.is_absolute():
        base = Path(spec.modelfiledir or ".")
        f = base / folder / f if not Path(folder).is_absolute() else Path(folder) / f
    if not f.is_file():
        raise InputError(where, f"refers to {element.file!r}, which is not at {f}")
    return f.resolve()


def adopt_assets(spec, where: Path, dest: Path | None, sub: str) -> list[AssetFile]:
    """Copy every file ``spec`` refers to into ``dest/sub/`` (keeping the names they have under their spec folder)
    and point the spec at the copies (absolute paths, so compiling finds them; ``relative_paths`` turns them into
    paths under ``assets/`` for writing). ``dest`` None: the spec is pointed at the originals."""
    files: list[AssetFile] = []
    used: dict[str, Path] = {}
    for el, folder in _elements(spec):
        src = _source(spec, el, folder, where)
        name = Path(el.file).name if Path(el.file).is_absolute() else el.file
        rel = "/".join(p for p in (sub, Path(name).as_posix()) if p)
        if rel in used and used[rel] != src:  # two files of one name in different folders
            rel = f"{Path(rel).with_suffix('')}_{len(used)}{Path(rel).suffix}"
        used[rel] = src
        if dest is not None:
            target = dest / rel
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, target)
            el.file = str(target)
        else:
            el.file = str(src)
        files.append(AssetFile(el, src, rel))
    return files


def relative_paths(xml: str, dest: Path) -> str:
    """The composed MJCF text with every file under ``dest`` (the twin's ``assets/``, its meshdir and texturedir)
    named relative to it. Done on the text: attached elements keep the compiler (and so the folders) of the spec
    they came from, so relative names set on them would be read against the robot's own folder."""
    prefix = f'file="{Path(dest).resolve()}/'
    if prefix not in xml:
        prefix = f'file="{dest}/'
    return xml.replace(prefix, 'file="')
