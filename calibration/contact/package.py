"""Write a contact fit into an exported package (``real2sim export``): MJCF geoms (friction, solref, solimp and a
contact priority above the support) and body inertials, USD physics materials (static / dynamic friction,
restitution where the fitted damping ratio implies a bounce) and masses, the per-object and scene URDF (mass,
inertia, and PyBullet's ``<contact>`` lateral / spinning / rolling friction), and a README / report section
saying per object which values were fitted."""

from __future__ import annotations

import html
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from real2sim.atomic import write_text
from real2sim.calibration.outputs.package import write_checked_mjcf, write_readme_section

BEGIN, END = "<!-- real2sim contact calibration: begin -->", "<!-- real2sim contact calibration: end -->"


def check_package(pkg: Path) -> None:
    from real2sim.calibration.outputs.package import package_files

    package_files(pkg)


def restitution(dampratio: float) -> float:
    """Coefficient of restitution of a linear spring-damper contact with damping ratio ζ (0 when ζ >= 1)."""
    if dampratio >= 1.0:
        return 0.0
    return float(math.exp(-math.pi * dampratio / math.sqrt(1.0 - dampratio * dampratio)))


def _fmt(v: float) -> str:
    return f"{v:.9g}"


def _fitted_model(report):
    """The fitted MjModel (identifiable values only) and which parameters were written."""
    from real2sim.calibration.contact.fit import model_at
    from real2sim.calibration.contact.run import load_model, set_cone

    keep = np.isfinite(report.stderr)
    vals = np.where(keep, report.values, report.initial)
    fitted = model_at(load_model(report.model_path), list(report.params), vals)
    set_cone(fitted, report.cone or "model")
    return fitted, keep


def write_contact_package(pkg: Path, report) -> list[str]:
    """Write the identifiable fitted values into the package; returns notes on what could not be placed."""
    import mujoco

    from real2sim.calibration.outputs.package import package_files

    name, mjcf, urdf, usd = package_files(pkg)
    fitted, keep = _fitted_model(report)
    params = [p for p, k in zip(report.params, keep, strict=True) if k]
    notes: list[str] = []
    text = mjcf.read_text()
    root = ET.fromstring(text)
    pmodel = mujoco.MjModel.from_xml_path(str(mjcf))
    top = int(np.max(pmodel.geom_priority)) + 1 if pmodel.ngeom else 1
    rows: list[tuple[str, str, str]] = []  # (object, property, value)
    geoms = sorted({p.element for p in params if p.kind == "geom"})
    bodies = sorted({p.element for p in params if p.kind == "body"})
    for g in geoms:
        el = next((e for e in root.iter("geom") if e.get("name") == g), None)
        if el is None:
            notes.append(f"package {pkg.name}: no geom {g!r} in {mjcf.name}: its contact was not written")
            continue
        gid = fitted.geom(g).id
        for attr in ("friction", "solref", "solimp"):
            if any(p.element == g and p.attribute == attr for p in params):
                vec = getattr(fitted, f"geom_{attr}")[gid]
                el.set(attr, " ".join(_fmt(float(x)) for x in vec))
                rows.append((g, attr, " ".join(f"{float(x):.4g}" for x in vec)))
        el.set("priority", str(max(top, int(el.get("priority", "0")))))
    for b in bodies:
        el = next((e for e in root.iter("body") if e.get("name") == b), None)
        inert = None if el is None else el.find("inertial")
        if inert is None:
            notes.append(f"package {pkg.name}: body {b!r} has no <inertial> in {mjcf.name}: not written")
            continue
        bid = fitted.body(b).id
        inert.set("mass", _fmt(float(fitted.body_mass[bid])))
        inert.set("pos", " ".join(_fmt(float(x)) for x in fitted.body_ipos[bid]))
        inert.set("diaginertia", " ".join(_fmt(float(x)) for x in fitted.body_inertia[bid]))
        rows.append((b, "mass", f"{float(fitted.body_mass[bid]):.4g} kg"))
    if report.cone and params:
        opt = root.find("option")
        if opt is None:
            opt = ET.Element("option")
            root.insert(0, opt)
        opt.set("cone", report.cone)
    write_checked_mjcf(mjcf, root, text)
    links = _link_values(fitted, geoms, bodies)
    for u in ([urdf] if urdf else []) + sorted((pkg / "urdf").glob("*.urdf")):
        _write_urdf(u, links)
    if usd is not None:
        notes += _write_usd(usd, links)
    _write_readme(pkg / "README.md", rows, report)
    if (pkg / "report.html").is_file():
        _write_report(pkg / "report.html", rows)
    return notes


def _link_values(fitted, geoms: list[str], bodies: list[str]) -> dict[str, dict[str, float]]:
    """Per body (URDF link / USD prim) the values to write: friction, restitution, mass, inertia."""
    out: dict[str, dict[str, float]] = {}
    for g in geoms:
        gid = fitted.geom(g).id
        b = fitted.body(int(fitted.geom_bodyid[gid])).name
        fr = fitted.geom_friction[gid]
        d = out.setdefault(b, {})
        d.update(lateral=float(fr[0]), spinning=float(fr[1]), rolling=float(fr[2]))
        if fitted.geom_solref[gid, 0] > 0:
            d["restitution"] = restitution(float(fitted.geom_solref[gid, 1]))
    for b in bodies:
        bid = fitted.body(b).id
        d = out.setdefault(b, {})
        d["mass"] = float(fitted.body_mass[bid])
        d["ixx"], d["iyy"], d["izz"] = (float(x) for x in fitted.body_inertia[bid])
    return out


def _write_urdf(path: Path, links: dict[str, dict[str, float]]) -> None:
    tree = ET.parse(path)
    root = tree.getroot()
    changed = False
    for link in root.iter("link"):
        v = links.get(link.get("name", ""))
        if not v:
            continue
        changed = True
        if "lateral" in v:
            c = link.find("contact")
            if c is None:
                c = ET.SubElement(link, "contact")
            for tag, key in (
                ("lateral_friction", "lateral"),
                ("spinning_friction", "spinning"),
                ("rolling_friction", "rolling"),
                ("restitution", "restitution"),
            ):
                if key in v:
                    e = c.find(tag)
                    if e is None:
                        e = ET.SubElement(c, tag)
                    e.set("value", _fmt(v[key]))
        inert = link.find("inertial")
        if "mass" in v and inert is not None:
            m = inert.find("mass")
            if m is not None:
                m.set("value", _fmt(v["mass"]))
            i = inert.find("inertia")
            if i is not None:
                for k in ("ixx", "iyy", "izz"):
                    i.set(k, _fmt(v[k]))
                for k in ("ixy", "ixz", "iyz"):
                    i.set(k, "0")
    if changed:
        ET.indent(root, "  ")
        write_text(
            path, '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
        )


def _write_usd(usd: Path, links: dict[str, dict[str, float]]) -> list[str]:
    try:
        from pxr import Usd, UsdPhysics, UsdShade
    except ImportError:
        return [f"{usd.name} not updated: the pxr module (usd-core) is not installed"]
    stage = Usd.Stage.Open(str(usd))
    notes = []
    for b, v in links.items():
        named = [p for p in stage.Traverse() if p.GetName() == b and p.GetTypeName() != "Material"]
        prims = [p for p in named if p.HasAPI(UsdPhysics.RigidBodyAPI)] or named
        if not prims:
            notes.append(f"{usd.name}: no prim {b!r}: not written")
            continue
        body = prims[0]
        if "mass" in v:
            UsdPhysics.MassAPI.Apply(body).CreateMassAttr().Set(v["mass"])
            UsdPhysics.MassAPI(body).CreateDiagonalInertiaAttr().Set((v["ixx"], v["iyy"], v["izz"]))
        if "lateral" not in v:
            continue
        for prim in Usd.PrimRange(body):
            if not prim.HasAPI(UsdPhysics.CollisionAPI):
                continue
            mat = UsdShade.MaterialBindingAPI(prim).ComputeBoundMaterial("physics")[0]
            target = mat.GetPrim() if mat else prim
            api = UsdPhysics.MaterialAPI.Apply(target)
            api.CreateStaticFrictionAttr().Set(v["lateral"])
            api.CreateDynamicFrictionAttr().Set(v["lateral"])
            if v.get("restitution", 0.0) > 0:
                api.CreateRestitutionAttr().Set(v["restitution"])
    stage.GetRootLayer().Save()
    return notes


def _section(rows: list[tuple[str, str, str]], report) -> list[str]:
    s = report.summary("after")["holdout"]
    lines = [
        "## Contact calibration",
        "",
        "Written by `real2sim calibrate --package` from logged motion.",
        "",
    ]
    lines += ["| object | property | value | source |", "|---|---|---|---|"]
    lines += [f"| `{o}` | {p} | {v} | fitted |" for o, p, v in rows]
    if report.cone:
        lines += [
            "",
            f"Friction cone: {report.cone} (`<option cone>`), the cone the values were fitted with.",
        ]
    if math.isfinite(s["window"]):
        lines += [
            "",
            f"Held-out error (body sizes): {report.horizon:g} s windows {s['window']:.4f}, whole run "
            f"{s['whole']:.4f}, at rest {s['rest']:.4f}.",
        ]
    return lines


def _write_readme(readme: Path, rows, report) -> None:
    write_readme_section(readme, "\n".join([BEGIN, *_section(rows, report), END]) + "\n", BEGIN, END)


def _write_report(path: Path, rows) -> None:
    text = path.read_text()
    if BEGIN in text and END in text:
        a, b = text.index(BEGIN), text.index(END) + len(END)
        text = text[:a] + text[b:]
    cells = "".join(
        f"<tr><td>{html.escape(o)}</td><td>{html.escape(p)}</td><td>{html.escape(v)}</td><td>fitted</td></tr>"
        for o, p, v in rows
    )
    block = (
        f"{BEGIN}<h2>Contact calibration</h2><table border=1><tr><th>object</th><th>property</th><th>value</th>"
        f"<th>source</th></tr>{cells}</table>{END}"
    )
    text = text.replace("</body>", block + "</body>") if "</body>" in text else text + block
    write_text(path, text)
