"""The USD (usd-core reads it: z-up metres, one physics scene, MuJoCo's bodies and masses, hull budget, friction
materials) and the per-object URDFs, on the real OSD test12 scan and the synthetic primitives scene."""

from __future__ import annotations

import json

import numpy as np
import pytest
import trimesh

from real2sim.export.config import ExportCfg
from real2sim.export.package import export_scene
from real2sim.scene import Scene, SceneObject, Support

pxr = pytest.importorskip("pxr", reason="usd-core is not installed: pip install 'real2sim[engines]'")


def _mjcf(pkg):
    import mujoco

    return mujoco.MjModel.from_xml_path(str(pkg.scene_xml))


def _stage(pkg):
    from pxr import Usd

    return Usd.Stage.Open(str(pkg.path / f"{pkg.name}.usd"))


def test_osd_test12_usd_has_mjcf_bodies_masses_hulls_and_friction(osd12_package):
    import mujoco
    from pxr import UsdGeom, UsdPhysics, UsdShade

    pkg = osd12_package
    assert not [c for c in pkg.checks if not c.passed]
    stage = _stage(pkg)
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0 and UsdPhysics.GetStageKilogramsPerUnit(stage) == 1.0
    assert stage.GetDefaultPrim().GetName() == pkg.name
    prims = list(stage.Traverse())
    scenes = [p for p in prims if p.IsA(UsdPhysics.Scene)]
    assert len(scenes) == 1
    s = UsdPhysics.Scene(scenes[0])
    assert tuple(s.GetGravityDirectionAttr().Get()) == (
        0,
        0,
        -1,
    ) and s.GetGravityMagnitudeAttr().Get() == pytest.approx(9.81)
    model = _mjcf(pkg)
    free = {
        model.body(int(model.jnt_bodyid[j])).name
        for j in range(model.njnt)
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE
    }
    rigid = {p.GetName(): p for p in prims if p.HasAPI(UsdPhysics.RigidBodyAPI)}
    assert set(rigid) == free and len(free) == 3
    for n, p in rigid.items():
        m = UsdPhysics.MassAPI(p).GetMassAttr().Get()
        assert m == pytest.approx(model.body(n).mass[0], rel=1e-4)
    meshes = [p for p in prims if p.HasAPI(UsdPhysics.MeshCollisionAPI)]
    assert len(meshes) > 3
    for p in meshes:
        assert UsdPhysics.MeshCollisionAPI(p).GetApproximationAttr().Get() == "convexHull"
        assert len(UsdGeom.Mesh(p).GetPointsAttr().Get()) <= 64
        mat, _ = UsdShade.MaterialBindingAPI(p).ComputeBoundMaterial("physics")
        assert UsdPhysics.MaterialAPI(mat.GetPrim()).GetDynamicFrictionAttr().Get() == pytest.approx(0.8)
        assert UsdPhysics.MaterialAPI(mat.GetPrim()).GetStaticFrictionAttr().Get() == pytest.approx(0.8)
    visual = stage.GetPrimAtPath(f"/{pkg.name}/object_1/visual")
    assert not visual.HasAPI(UsdPhysics.CollisionAPI)
    colors = UsdGeom.Mesh(visual).GetDisplayColorPrimvar()  # one per vertex where the scan has colours
    assert len(colors.Get()) == (
        len(UsdGeom.Mesh(visual).GetPointsAttr().Get()) if colors.GetInterpolation() == "vertex" else 1
    )
    schema = next(c for c in pkg.checks if c.name == "usd physics schema")
    assert schema.value < 1e-4


def test_osd_test12_object_urdfs(osd12_package):
    import yourdfpy

    pkg = osd12_package
    model = _mjcf(pkg)
    poses = json.loads((pkg.path / "urdf" / "poses.json").read_text())
    assert sorted(poses) == ["object_1", "object_2", "object_3", "support"]
    table = poses.pop("support")
    assert table == {"urdf": "support.urdf", "xyz": [0, 0, 0], "quat_xyzw": [0, 0, 0, 1], "fixed": True}
    u = yourdfpy.URDF.load(str(pkg.path / "urdf" / "support.urdf"))
    (box,) = u.link_map["support"].collisions
    i = model.geom("support").id
    assert np.allclose(box.geometry.box.size, 2 * model.geom_size[i], atol=1e-8)
    assert np.allclose(box.origin[:3, 3], model.geom_pos[i], atol=1e-8)
    for n, e in poses.items():
        u = yourdfpy.URDF.load(str(pkg.path / "urdf" / e["urdf"]), load_meshes=True)
        assert u.base_link == n and list(u.link_map) == [n]
        inertial = u.link_map[n].inertial
        assert inertial.mass == pytest.approx(model.body(n).mass[0], rel=1e-4)
        assert np.allclose(np.linalg.eigvalsh(inertial.inertia), np.sort(model.body(n).inertia), rtol=1e-4)
        assert len(u.link_map[n].collisions) == sum(
            (model.geom_bodyid == model.body(n).id) & (model.geom_group == 3)
        )
        assert np.allclose(
            e["xyz"], model.key("home").qpos[7 * int(n[-1]) - 7 : 7 * int(n[-1]) - 4], atol=1e-9
        )
        assert e["fixed"] is False


def test_primitives_become_usd_shapes_with_mjcf_sizes(synthetic_package):
    import mujoco
    from pxr import UsdGeom, UsdPhysics

    pkg = synthetic_package
    assert ExportCfg().formats == ("mjcf", "urdf", "usd")  # the demo's export writes the USD too
    stage, model = _stage(pkg), _mjcf(pkg)
    for body, kind in (("box", UsdGeom.Cube), ("can", UsdGeom.Cylinder), ("ball", UsdGeom.Sphere)):
        prim = stage.GetPrimAtPath(f"/{pkg.name}/{body}/collision_0")
        assert prim.IsA(kind) and prim.HasAPI(UsdPhysics.CollisionAPI)
        size = model.geom(f"{body}_collision_0").size
        xf = UsdGeom.Xformable(prim).GetLocalTransformation()
        if kind is UsdGeom.Cube:
            scale = [np.linalg.norm(xf.GetRow(i)) for i in range(3)]
            assert np.allclose(scale, size, rtol=1e-5) and UsdGeom.Cube(prim).GetSizeAttr().Get() == 2.0
        elif kind is UsdGeom.Cylinder:
            c = UsdGeom.Cylinder(prim)
            assert (
                c.GetRadiusAttr().Get() == pytest.approx(size[0], rel=1e-5) and c.GetAxisAttr().Get() == "Z"
            )
            assert c.GetHeightAttr().Get() == pytest.approx(2 * size[1], rel=1e-5)
        else:
            assert UsdGeom.Sphere(prim).GetRadiusAttr().Get() == pytest.approx(size[0], rel=1e-5)
        assert model.geom(f"{body}_collision_0").type[0] != mujoco.mjtGeom.mjGEOM_MESH


def test_static_objects_have_no_rigid_body_and_same_input_gives_same_bytes(tmp_path, cache_dir):
    from pxr import Usd, UsdPhysics

    def at(x: float, z: float) -> np.ndarray:
        t = np.eye(4)
        t[:3, 3] = [x, 0.0, z]
        return t

    objs = (
        SceneObject("shelf", trimesh.creation.box((0.2, 0.1, 0.1)), at(0.0, 0.05), role="static"),
        SceneObject("cube", trimesh.creation.box((0.05, 0.05, 0.05)), at(0.2, 0.025), density=500.0),
    )
    cfg = ExportCfg(workers=1, cache_dir=cache_dir, render=False)
    a = export_scene(Scene(Support(size=(0.6, 0.6)), objs), tmp_path / "a" / "pkg", cfg)
    b = export_scene(Scene(Support(size=(0.6, 0.6)), objs), tmp_path / "b" / "pkg", cfg)
    for f in ("pkg.usd", "urdf/shelf.urdf", "urdf/cube.urdf", "urdf/poses.json", "README.md"):
        assert (a.path / f).read_bytes() == (b.path / f).read_bytes(), f
    stage = Usd.Stage.Open(str(a.path / "pkg.usd"))
    shelf, cube = stage.GetPrimAtPath("/pkg/shelf"), stage.GetPrimAtPath("/pkg/cube")
    assert not shelf.HasAPI(UsdPhysics.RigidBodyAPI) and not shelf.HasAPI(UsdPhysics.MassAPI)
    assert stage.GetPrimAtPath("/pkg/shelf/collision_0").HasAPI(UsdPhysics.CollisionAPI)
    assert cube.HasAPI(UsdPhysics.RigidBodyAPI)
    assert json.loads((a.path / "urdf" / "poses.json").read_text())["shelf"]["fixed"] is True
    readme = (a.path / "README.md").read_text()
    for engine in ("Isaac Sim", "Isaac Lab", "UsdFileCfg", "Newton", "PyBullet", "MuJoCo"):
        assert engine in readme


def test_without_usd_core_export_writes_no_usd_and_warns_once(tmp_path, cache_dir, monkeypatch, caplog):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "pxr" else real(n, *a))
    t = np.eye(4)
    t[2, 3] = 0.025
    box = SceneObject("cube", trimesh.creation.box((0.05, 0.05, 0.05)), t)
    with caplog.at_level("WARNING"):
        pkg = export_scene(
            Scene(Support(), (box,)), tmp_path / "p", ExportCfg(workers=1, cache_dir=cache_dir, render=False)
        )
    assert not (pkg.path / "p.usd").exists() and (pkg.path / "urdf" / "cube.urdf").is_file()
    assert [r.message for r in caplog.records if "usd-core" in r.message] == [
        "usd-core is not installed, so no USD is written: pip install 'real2sim[engines]'"
    ]
    assert "p.usd" not in (pkg.path / "README.md").read_text()
