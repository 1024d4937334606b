"""Package ``README.md`` and ``report.html``: inputs with hashes, steps, options, tool versions, checks, renders."""

from __future__ import annotations

import html

from real2sim.export.physics.values import SOURCES
from real2sim.export.report.loading import engine_files_md, loading_md
from real2sim.export.writers.manifest import PackageManifest
from real2sim.results import Check

STEPS = (
    "repair each object mesh to a watertight manifold (trimesh clean-up, pymeshfix hole filling)",
    "mass, centre of mass and full inertia tensor from the watertight mesh and the given mass, density or material "
    "(else the scene's density): see Physical properties",
    "visual mesh: quadric decimation to the face budget (Open3D), vertex colours kept",
    "collision: the mesh's own convex hull if the mesh is convex and the hull within the vertex budget, else a "
    "primitive where one fits within tolerance, else CoACD on the decimated mesh within the hull budget",
    "settle dynamic objects: lowest collision point onto the support top, then simulate until every object is at "
    "rest (at most 3 s); the rest poses become the `home` keyframe (objects that move > 1 cm keep their scan pose)",
    "MJCF with mujoco.MjSpec, URDF with relative mesh paths; a dynamic object of several hulls meets the support "
    "through one more geom, the convex hull of its hulls (MJCF contype/conaffinity, USD collision groups; not in "
    "URDF), and its hulls meet only other objects",
    "USD with usd-core (UsdPhysics), one URDF per object",
    "validate: compile, load the URDF (MuJoCo, yourdfpy), step, penetration, drift, inertia, budget, fidelity",
    "engines: the USD's physics schema (usd-core), a per-object URDF through urdf2webots (`real2sim validate` "
    "adds PyBullet and Newton: bodies dropped 5 mm come back to MuJoCo's rest)",
)


CSS_CLASS = {"pass": "ok", "FAIL": "bad", "skipped": "skip"}
"""The report table row's class for each check result."""


def readme_md(info: PackageManifest, checks: tuple[Check, ...]) -> str:
    name = info.name
    lines = [
        f"# {name}",
        "",
        "Simulation package made by `real2sim export`.",
        "",
        f"- `scene.xml`: load this in MuJoCo (includes `{name}.xml`, adds floor and light)",
        f"- `{name}.xml`: the model only",
    ]
    if info.urdf:
        lines.append(
            f"- `{name}.urdf`: the same objects for other engines (mesh paths relative to this folder)"
        )
    lines += engine_files_md(info)
    lines += [
        "- `assets/`: visual meshes (`*_visual.obj`) and collision hulls (`*_collision_<i>.obj`); an object whose"
        " capture had colour (scan points, photos, splat) also has `*_visual.png`, those colours as a"
        " texture on the mesh's UVs (MJCF material, URDF material texture, `*_visual.mtl` for OBJ viewers);"
        " the others are drawn in one colour; `*_support.obj`: an object's support-contact hull (MJCF geom group 4,"
        " the only part of it that touches the support)",
        "- `report.html`, `renders/`: checks, a scene overview and pictures of visual vs collision geometry",
        *loading_md(info),
        "",
        "## Inputs",
        "",
        "| file | sha256 |",
        "|---|---|",
    ]
    lines += [f"| `{k}` | `{v}` |" for k, v in info.inputs.items()]
    lines += [
        "",
        "## Objects",
        "",
        "| body | source name | role | mass [kg] | collision | warnings |",
        "|---|---|---|---|---|---|",
    ]
    for o in info.objects:
        lines.append(
            f"| `{o.name}` | {o.label} | {o.role} | {o.mass:.6g} | {o.collision} | {'; '.join(o.warnings) or '-'} |"
        )
    lines += physics_md(info)
    lines += ["", "## Steps", ""] + [f"{i + 1}. {s}" for i, s in enumerate(STEPS)]
    lines += ["", "## Options", "", "| option | value |", "|---|---|"]
    lines += [f"| {k} | `{v}` |" for k, v in info.options.items()]
    lines += ["", "## Tool versions", "", "| tool | version |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in info.tools.items()]
    lines += ["", "## Checks", "", "| check | result | detail |", "|---|---|---|"]
    lines += [f"| {c.name} | {c.result} | {c.detail} |" for c in checks]
    return "\n".join(lines) + "\n"


PHYSICS_HEADER = ("body", "mass [kg]", "from", "density [kg/m^3]", "from", "friction (sliding)", "from")


def physics_rows(info: PackageManifest) -> list[tuple[str, ...]]:
    """One row per object: mass, density and sliding friction, each with its source (``PHYSICS_HEADER``)."""
    rows = []
    for o in info.objects:
        ph = o.physics
        if not ph:
            continue
        fr = ph["friction"].value
        rows.append(
            (
                o.name,
                f"{ph['mass'].value:.6g}",
                ph["mass"].source,
                f"{ph['density'].value:.6g}",
                ph["density"].source,
                f"{(fr[0] if isinstance(fr, tuple) else fr):.6g}",
                ph["friction"].source,
            )
        )
    return rows


def physics_md(info: PackageManifest) -> list[str]:
    """The README's "Physical properties" section: each object's values and where each came from."""
    rows = physics_rows(info)
    if not rows:
        return []
    out = [
        "",
        "## Physical properties",
        "",
        "Each value's source (also in `export.json`, `objects[].physics`): "
        + "; ".join(f"`{k}`: {v}" for k, v in SOURCES.items())
        + ".",
        "",
        "| " + " | ".join(PHYSICS_HEADER) + " |",
        "|" + "---|" * len(PHYSICS_HEADER),
    ]
    out += ["| " + " | ".join((f"`{r[0]}`", *r[1:])) + " |" for r in rows]
    return out


def with_physics(readme: str, info: PackageManifest) -> str:
    """``readme`` (a package README) with its "Physical properties" section rewritten from ``info`` (for a tool that
    updates values and sources, e.g. to ``fitted``); appended where the README has none."""
    section = "\n".join(physics_md(info)).strip("\n") + "\n"
    head, found, rest = readme.partition("## Physical properties\n")
    if not found:
        return readme.rstrip("\n") + "\n\n" + section
    tail = rest.split("\n## ", 1)
    return head + section + ("\n## " + tail[1] if len(tail) > 1 else "")


def report_html(info: PackageManifest, checks: tuple[Check, ...], renders: list[str]) -> str:
    e = html.escape
    name = info.name
    rows = "".join(
        f"<tr class='{CSS_CLASS[c.result]}'><td>{e(c.name)}</td><td>{c.result}</td>"
        f"<td>{e(c.detail)}</td></tr>"
        for c in checks
    )
    objs = "".join(
        f"<tr><td>{e(o.name)}</td><td>{e(o.label)}</td><td>{e(o.role)}</td><td>{o.mass:.6g}</td>"
        f"<td>{e(o.collision)}</td></tr>"
        for o in info.objects
    )
    phys = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in physics_rows(info))
    phys_head = "<tr>" + "".join(f"<th>{e(h)}</th>" for h in PHYSICS_HEADER) + "</tr>"
    legend = "".join(f"<li><b>{e(k)}</b>: {e(v)}</li>" for k, v in SOURCES.items())
    imgs = "".join(
        f"<figure><img src='{e(r)}' width='480'><figcaption>{e(r)}</figcaption></figure>" for r in renders
    )
    opts = "".join(f"<tr><td>{e(str(k))}</td><td>{e(str(v))}</td></tr>" for k, v in info.options.items())
    ins = "".join(f"<tr><td>{e(k)}</td><td><code>{e(v)}</code></td></tr>" for k, v in info.inputs.items())
    tools = "".join(f"<tr><td>{e(k)}</td><td>{e(v)}</td></tr>" for k, v in info.tools.items())
    return (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>"
        + e(name)
        + " export report</title><style>body{font-family:sans-serif}td{padding:2px 8px}"
        + ".ok td:nth-child(2){color:green}.bad td:nth-child(2){color:red}.skip td:nth-child(2){color:gray}"
        + "</style></head><body>\n"
        + f"<h1>{e(name)}</h1>\n<h2>Checks</h2><table>{rows}</table>\n<h2>Objects</h2><table>"
        + "<tr><th>body</th><th>source</th><th>role</th><th>mass [kg]</th><th>collision</th></tr>"
        + f"{objs}</table>\n<h2>Physical properties</h2><table>{phys_head}{phys}</table><ul>{legend}</ul>\n"
        + f"<h2>Renders (scene overview; each object: visual | collision)</h2>{imgs}\n<h2>Inputs</h2><table>{ins}</table>\n"
        + f"<h2>Options</h2><table>{opts}</table>\n<h2>Tools</h2><table>{tools}</table>\n</body></html>\n"
    )
