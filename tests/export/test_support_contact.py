"""The support-contact hull: an object of several pieces meets the support through one geom (its pieces' convex hull)
and its pieces meet only other objects, in the MJCF (contype/conaffinity) and in the USD (collision groups)."""

from __future__ import annotations

import numpy as np

from real2sim.export.collision.support_contact import GROUP, HULL, PIECES, SUPPORT


def _model(pkg):
    import mujoco

    return mujoco.MjModel.from_xml_path(str(pkg.scene_xml))


def _support_contacts(model, seconds: float = 0.5) -> tuple[float, set[tuple[int, int]]]:
    """Mean contacts a step over a rest from ``home``, and the (group, geom) pairs that touched the support."""
    import mujoco

    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    sup = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "support")
    n, touching = 0, set()
    steps = int(seconds / model.opt.timestep)
    for _ in range(steps):
        mujoco.mj_step(model, data)
        n += data.ncon
        for c in data.contact[: data.ncon]:
            if sup in (c.geom1, c.geom2):
                g = c.geom2 if c.geom1 == sup else c.geom1
                touching.add((int(model.geom_group[g]), int(g)))
    return n / steps, touching


def test_osd_test12_hulled_object_rests_on_its_support_hull_only(osd12_package):
    import mujoco

    model = _model(osd12_package)
    sup = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "support")
    assert (model.geom_contype[sup], model.geom_conaffinity[sup]) == SUPPORT
    hulled = [
        b for b in range(1, model.nbody) if sum(model.geom_group[model.geom_bodyid == b] == 3) >= 2
    ]  # OSD test12: its boxes are closer as hulls (docs/collision.md)
    assert hulled
    for b in hulled:
        g = [i for i in range(model.ngeom) if model.geom_bodyid[i] == b]
        shull = [i for i in g if model.geom_group[i] == GROUP]
        pieces = [i for i in g if model.geom_group[i] == 3]
        assert len(shull) == 1 and (model.geom_contype[shull[0]], model.geom_conaffinity[shull[0]]) == HULL
        assert all((model.geom_contype[i], model.geom_conaffinity[i]) == PIECES for i in pieces)
        assert model.mesh_vertnum[model.geom_dataid[shull[0]]] <= 64
    mean, touching = _support_contacts(model)
    groups = {grp for grp, _ in touching}
    assert GROUP in groups and all(  # pieces of a hulled object never touch the support
        model.geom_bodyid[g] not in hulled for grp, g in touching if grp == 3
    )
    assert mean <= 4 * model.nbody, mean  # a few contacts per object, not ~4 per base hull


def test_usd_collision_groups_match_the_mjcf_classes(osd12_package):
    from pxr import Sdf, Usd, UsdPhysics

    stage = Usd.Stage.Open(str(osd12_package.path / f"{osd12_package.name}.usd"))
    root = stage.GetDefaultPrim().GetPath()
    table = UsdPhysics.CollisionGroup.ComputeCollisionGroupTable(stage)
    g = {n: root.AppendPath(f"collision_groups/{n}") for n in ("support", "support_contact", "object_pieces")}

    def on(a: str, b: str) -> bool:
        return table.IsCollisionEnabled(Sdf.Path(g[a]), Sdf.Path(g[b]))

    assert on("support", "support_contact") and not on("support", "object_pieces")
    assert on("object_pieces", "object_pieces") and not on("support_contact", "object_pieces")
    assert not on("support_contact", "support_contact")
    hulls = UsdPhysics.CollisionGroup(stage.GetPrimAtPath(g["support_contact"]))
    members = hulls.GetCollidersCollectionAPI().GetIncludesRel().GetTargets()
    assert members and all(str(p).endswith("/support_contact") for p in members)


def test_off_gives_default_classes_and_no_extra_geom(synthetic_scene, tmp_path, cache_dir):
    from real2sim.export.config import ExportCfg
    from real2sim.export.package import export_scene

    cfg = ExportCfg(workers=1, cache_dir=cache_dir, render=False, support_hull=False, formats=("mjcf",))
    model = _model(export_scene(synthetic_scene, tmp_path / "p", cfg))
    assert not np.any(model.geom_group == GROUP)
    cols = model.geom_group == 3
    assert np.all(model.geom_contype[cols] == 1) and np.all(model.geom_conaffinity[cols] == 1)
