"""The package README's lines on its engine files and how to load the package in each engine."""

from __future__ import annotations

from real2sim.export.writers.manifest import PackageManifest


def engine_files_md(info: PackageManifest) -> list[str]:
    """README bullets for ``<name>.usd`` and ``urdf/`` (the files each format adds)."""
    formats = str(info.options.get("formats", ""))
    lines = []
    if "usd" in formats:
        lines.append(
            f"- `{info.name}.usd`: the scene as USD with UsdPhysics (rigid bodies, masses, convex-hull colliders, "
            "friction materials; z up, metres): Isaac Sim, Isaac Lab, Newton"
        )
    if info.urdf:
        lines.append(
            "- `urdf/<object>.urdf`: one URDF per object (base link = the object) for PyBullet, ManiSkill, "
            "Genesis and URDF importers, and `urdf/support.urdf` (the table); `urdf/poses.json` gives each one's "
            "resting pose"
        )
    return lines


def loading_md(info: PackageManifest) -> list[str]:
    """README section "Load it in": two or three lines per engine, for the files this package has."""
    n = info.name
    formats = str(info.options.get("formats", ""))
    out = ["", "## Load it in", ""]
    out += [
        "- **MuJoCo**: `m = mujoco.MjModel.from_xml_path('scene.xml'); d = mujoco.MjData(m); "
        "mujoco.mj_resetDataKeyframe(m, d, 0)` (the `home` keyframe is the resting pose).",
    ]
    if "usd" in formats:
        out += [
            f"- **Isaac Sim**: add `{n}.usd` to a stage as a reference, e.g. "
            f"`isaacsim.core.utils.stage.add_reference_to_stage('{n}.usd', '/World/{n}')` (or File > Add "
            "Reference); its physics scene, rigid bodies and colliders come with it.",
            f"- **Isaac Lab**: `AssetBaseCfg(prim_path='{{ENV_REGEX_NS}}/{n}', "
            f"spawn=sim_utils.UsdFileCfg(usd_path='{n}.usd'))` in the scene config.",
            f"- **Newton**: `b = newton.ModelBuilder(); b.add_usd('{n}.usd'); model = b.finalize()` "
            "(runs on the CPU too: `finalize(device='cpu')`).",
        ]
    if info.urdf:
        out += [
            "- **PyBullet**: for each entry of `urdf/poses.json`: `p.loadURDF('urdf/' + e['urdf'], e['xyz'], "
            "e['quat_xyzw'], useFixedBase=e['fixed'], flags=p.URDF_USE_INERTIA_FROM_FILE)` "
            "(the file's inertia, not one from the collision shapes). The entry `support` is the table: PyBullet "
            "multiplies the lateral friction and the restitution of the two bodies in a contact, and `support.urdf` has "
            "1 for both (and no rolling or spinning friction), so each object slides and bounces with its own values; "
            "on a ground of your own, set the same (`p.changeDynamics(ground, -1, lateralFriction=1, restitution=1)`).",
        ]
    return out
