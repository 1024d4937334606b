"""Write calibrated values into an exported package (``real2sim export``): its MJCF, URDF and USD, with the diff
(parameter: old -> new) in a section of its README.

A parameter is written where the package has an element of the same name: ``body:NAME.mass`` /
``geom:NAME.friction`` of the package's objects, and joint / actuator / delay parameters of a robot the package
holds. Parameters the fit could not identify are never written (they kept their prior).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from real2sim.atomic import write_text
from real2sim.bounded import load_json
from real2sim.calibration.params.kinds import KINDS
from real2sim.calibration.params.resolved import Resolved
from real2sim.errors import InputError

BEGIN, END = "<!-- real2sim calibrate: begin -->", "<!-- real2sim calibrate: end -->"


@dataclass
class PackageEdit:
    """What the write-back changed: (parameter, file, old, new) rows, and the parameters it could not place."""

    rows: list[tuple[str, str, str, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def package_files(pkg: Path) -> tuple[str, Path, Path | None, Path | None]:
    """(name, MJCF, URDF or None, USD or None) of an exported package."""
    try:
        name = load_json(pkg / "export.json")["name"]
        if not isinstance(name, str):
            raise TypeError
    except (InputError, KeyError, TypeError):
        raise InputError(
            pkg, "not an exported package (no export.json with a name; see real2sim export)"
        ) from None
    mjcf = pkg / f"{name}.xml"
    if not mjcf.is_file():
        raise InputError(pkg, f"package has no {mjcf.name}")
    urdf = pkg / f"{name}.urdf"
    usd = next(
        (pkg / f"{name}{s}" for s in (".usd", ".usda", ".usdc") if (pkg / f"{name}{s}").is_file()), None
    )
    return name, mjcf, urdf if urdf.is_file() else None, usd


def _old_value(model, p: Resolved) -> float | None:
    """The package's compiled value of ``p`` (None: no element of that name)."""
    return KINDS[p.kind].compiled_value(model, p)


def set_xml(root: ET.Element, p: Resolved, v: float, model) -> str | None:
    """Set ``p`` on its element in the MJCF tree; returns why not, or None when set."""
    kind = KINDS[p.kind]
    els = [e for e in root.iter() if e.get("name") == p.element and e.tag in kind.xml_tags]
    if not els:
        return "its element is not in this file"
    return kind.write_xml(els[0], p, v, model)


def write_checked_mjcf(mjcf: Path, root: ET.Element, text: str) -> None:
    """Write the edited MJCF tree ``root`` over ``mjcf`` (whose text was ``text``) and compile it; a model that no
    longer compiles is put back as it was and refused with one ``InputError``."""
    import mujoco

    new = ET.tostring(root, encoding="unicode") + ("\n" if text.endswith("\n") else "")
    if " />" not in text:  # keep MjSpec's "<tag/>" spelling
        new = new.replace(" />", "/>")
    write_text(mjcf, new)
    try:
        mujoco.MjModel.from_xml_path(str(mjcf))
    except ValueError as e:
        write_text(mjcf, text)
        raise InputError(
            mjcf, f"calibrated package model does not compile: {str(e).splitlines()[0]}"
        ) from None


def write_package(pkg: Path, params: list[Resolved], values: np.ndarray, keep: np.ndarray) -> PackageEdit:
    """Write ``values`` (where ``keep`` is False: skipped, not identifiable) into the package; returns the edit.
    The MJCF is edited in place as XML (everything else in it stays as the exporter wrote it) and must compile."""
    import mujoco

    pkg = Path(pkg)
    name, mjcf, urdf, usd = package_files(pkg)
    edit = PackageEdit()
    model = mujoco.MjModel.from_xml_path(str(mjcf))
    text = mjcf.read_text()
    root = ET.fromstring(text, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    placed: list[tuple[Resolved, float]] = []
    for p, v, ok in zip(params, values, keep, strict=True):
        if not ok:
            edit.skipped.append(f"{p.name} (not identifiable: kept the package's value)")
            continue
        old = _old_value(model, p)
        why = (
            f"no {p.kind} {p.element!r} in {mjcf.name}" if old is None else set_xml(root, p, float(v), model)
        )
        if why is not None:
            edit.skipped.append(f"{p.name} ({why})")
            continue
        placed.append((p, float(v)))
        edit.rows.append((p.name, mjcf.name, f"{old:.6g}", f"{float(v):.6g}"))
    if placed:
        write_checked_mjcf(mjcf, root, text)
    if urdf is not None and placed:
        _write_urdf(urdf, placed, edit)
    if usd is not None and placed:
        _write_usd(usd, placed, edit)
    _write_readme(pkg / "README.md", edit)
    return edit


def _write_urdf(urdf: Path, placed: list[tuple[Resolved, float]], edit: PackageEdit) -> None:
    tree = ET.parse(urdf)
    root = tree.getroot()
    from real2sim.calibration.outputs.writeback import urdf_target

    for p, v in placed:
        target = urdf_target(root, p)
        if target is None:
            continue
        el, attr, old = target
        el.set(attr, repr(float(v)))
        edit.rows.append((p.name, urdf.name, f"{float(old):.6g}", f"{v:.6g}"))
    write_text(
        urdf, '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
    )


def _write_usd(usd: Path, placed: list[tuple[Resolved, float]], edit: PackageEdit) -> None:
    """Masses (``UsdPhysics.MassAPI``) and friction (``physics:dynamicFriction`` of the bound physics material or of
    the prim itself) by prim name, with pxr; without pxr one note."""
    try:
        from pxr import Usd, UsdPhysics, UsdShade
    except ImportError:
        edit.notes.append(f"{usd.name} not updated: the pxr module (usd-core) is not installed")
        return
    stage = Usd.Stage.Open(str(usd))
    by_name: dict[str, list] = {}
    for prim in stage.Traverse():  # MJCF's <object>_collision_<i> is the USD's <object>/collision_<i>
        by_name.setdefault(prim.GetName(), []).append(prim)
        parent = prim.GetParent()
        if parent and parent.GetName():
            by_name.setdefault(f"{parent.GetName()}_{prim.GetName()}", []).append(prim)
    for p, v in placed:
        for prim in by_name.get(p.element, []):
            if p.kind == "body" and p.attribute == "mass" and prim.HasAPI(UsdPhysics.MassAPI):
                attr = UsdPhysics.MassAPI(prim).GetMassAttr()
            elif p.kind == "geom" and p.attribute == "friction":
                mat = UsdShade.MaterialBindingAPI(prim).ComputeBoundMaterial("physics")[0]
                target = mat.GetPrim() if mat else prim
                attr = target.GetAttribute("physics:dynamicFriction")
                if not attr:
                    continue
                static = target.GetAttribute("physics:staticFriction")
                if static:  # MuJoCo has one sliding friction: both USD coefficients take it
                    static.Set(float(v))
            else:
                continue
            old = attr.Get()
            attr.Set(float(v))
            edit.rows.append((p.name, usd.name, f"{float(old or 0):.6g}", f"{v:.6g}"))
            break
    stage.GetRootLayer().Save()


def _write_readme(readme: Path, edit: PackageEdit) -> None:
    lines = [BEGIN, "## Calibration", "", "Written by `real2sim calibrate --package`.", ""]
    if edit.rows:
        lines += ["| parameter | file | old -> new |", "|---|---|---|"]
        lines += [f"| `{n}` | `{f}` | {a} -> {b} |" for n, f, a, b in edit.rows]
    else:
        lines.append("No calibrated parameter names an element of this package.")
    if edit.skipped:
        lines += ["", "Not written:", ""] + [
            f"- `{s.split(' ', 1)[0]}` {s.split(' ', 1)[1]}" for s in edit.skipped
        ]
    lines += [f"- {n}" for n in edit.notes] if edit.notes else []
    lines.append(END)
    write_readme_section(readme, "\n".join(lines) + "\n")


def write_readme_section(readme: Path, block: str, begin: str = BEGIN, end: str = END) -> None:
    """Put ``block`` (from ``begin`` to ``end``) into ``readme``: in place of an earlier one, else at the end."""
    text = readme.read_text() if readme.is_file() else ""
    if begin in text and end in text:
        a, b = text.index(begin), text.index(end) + len(end)
        text = text[:a] + block.rstrip("\n") + text[b:]
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + block
    write_text(readme, text)
