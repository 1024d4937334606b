"""The true objects of the sample session: watertight meshes of known geometry, density and mass, placed on the table.

Every mesh is expressed in its own object frame: origin at the centre of the footprint's bounding box, z up, the
resting face at z = 0. ``world_from_object`` is therefore a yaw rotation plus a translation in the table plane
(the table top is z = 0 in the world frame), so every object rests with its bottom at z = 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh


@dataclass(frozen=True)
class TrueObject:
    """One ground-truth object."""

    name: str
    """Unique object name (also the mesh file stem)."""
    kind: str
    """Shape family: ``box``, ``cylinder``, ``mug``, ``stone``."""
    mesh: trimesh.Trimesh
    """Watertight triangle mesh in the object frame [m]."""
    density: float
    """Density [kg/m^3]."""
    rgb: tuple[float, float, float]
    """Base colour 0..1 (renders and LiDAR intensity)."""
    world_from_object: np.ndarray
    """4x4 pose on the table (yaw about z + translation, z = 0)."""

    @property
    def volume(self) -> float:
        """Enclosed volume [m^3] of the watertight mesh."""
        return float(self.mesh.volume)

    @property
    def mass(self) -> float:
        """Mass [kg] = volume x density."""
        return self.volume * self.density

    def mesh_in_world(self) -> trimesh.Trimesh:
        m = self.mesh.copy()
        m.apply_transform(self.world_from_object)
        return m


def _from_manifold(man) -> trimesh.Trimesh:  # noqa: ANN001 - manifold3d.Manifold
    out = man.to_mesh64()
    v = np.asarray(out.vert_properties, dtype=np.float64)[:, :3]
    f = np.asarray(out.tri_verts, dtype=np.int64)
    return trimesh.Trimesh(v, f, process=True)


def _to_manifold(mesh: trimesh.Trimesh):  # noqa: ANN202
    import manifold3d

    m = manifold3d.Mesh64(
        vert_properties=np.ascontiguousarray(mesh.vertices, dtype=np.float64),
        tri_verts=np.ascontiguousarray(mesh.faces, dtype=np.uint64),
    )
    return manifold3d.Manifold(m)


def _rest_on_z0(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """Shift so the footprint's bounding-box centre is at x = y = 0 and the lowest point at z = 0."""
    lo, hi = mesh.bounds
    mesh = mesh.copy()
    mesh.apply_translation([-(lo[0] + hi[0]) / 2, -(lo[1] + hi[1]) / 2, -lo[2]])
    return mesh


def make_box(size: tuple[float, float, float]) -> trimesh.Trimesh:
    """A solid box of full extents ``size`` [m]."""
    return _rest_on_z0(trimesh.creation.box(extents=size))


def make_cylinder(radius: float, height: float, sections: int = 64) -> trimesh.Trimesh:
    """A solid upright cylinder [m]."""
    import manifold3d

    return _rest_on_z0(_from_manifold(manifold3d.Manifold.cylinder(height, radius, radius, sections)))


def make_mug(
    radius: float = 0.04,
    height: float = 0.095,
    wall: float = 0.005,
    bottom: float = 0.008,
    sections: int = 64,
) -> trimesh.Trimesh:
    """A concave mug: a cylinder hollowed from the top (open cavity) with a ring handle, one watertight solid."""
    import manifold3d

    M, CS = manifold3d.Manifold, manifold3d.CrossSection
    outer = M.cylinder(height, radius, radius, sections)
    cavity = M.cylinder(height, radius - wall, radius - wall, sections).translate([0.0, 0.0, bottom])
    # Ring handle: a torus in the x-z plane on the +x side, merged into the wall.
    major, minor = 0.026, 0.006
    torus = CS.circle(minor, 20).translate([major, 0.0]).revolve(48)  # ring around the z axis
    torus = torus.rotate([90.0, 0.0, 0.0]).translate([radius, 0.0, 0.52 * height])
    solid = (outer + torus) - cavity
    return _rest_on_z0(_from_manifold(solid))


def make_stone(
    rng: np.random.Generator, radii: tuple[float, float, float] = (0.05, 0.038, 0.034), subdivisions: int = 4
) -> trimesh.Trimesh:
    """An irregular smooth pebble: a sphere with low-frequency radial bumps, scaled, its bottom cut flat to rest."""
    sphere = trimesh.creation.icosphere(subdivisions=subdivisions)
    d = sphere.vertices / np.linalg.norm(sphere.vertices, axis=1, keepdims=True)
    r = np.ones(len(d))
    for _ in range(6):
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        freq = rng.uniform(1.5, 3.5)
        r += rng.uniform(0.03, 0.07) * np.sin(freq * (d @ u) * np.pi + rng.uniform(0, 2 * np.pi))
    v = d * r[:, None] * np.asarray(radii)
    bumpy = trimesh.Trimesh(v, sphere.faces, process=False)
    z_cut = float(v[:, 2].min()) + 0.22 * float(np.ptp(v[:, 2]))
    cut = _to_manifold(bumpy).trim_by_plane([0.0, 0.0, 1.0], z_cut)  # keep the part above z_cut
    return _rest_on_z0(_from_manifold(cut))


def yaw_pose(x: float, y: float, yaw: float) -> np.ndarray:
    c, s = np.cos(yaw), np.sin(yaw)
    T = np.eye(4)
    T[:2, :2] = [[c, -s], [s, c]]
    T[0, 3], T[1, 3] = x, y
    return T


def footprint_radius(mesh: trimesh.Trimesh) -> float:
    """Radius [m] of the circle about the object-frame z axis that contains the whole mesh."""
    return float(np.linalg.norm(mesh.vertices[:, :2], axis=1).max())


def place_discs(
    rng: np.random.Generator,
    radii: list[float],
    area_half: tuple[float, float],
    gap: float,
    max_tries: int = 10000,
) -> list[tuple[float, float]]:
    """Random centres for discs of ``radii`` inside ``[-ax, ax] x [-ay, ay]`` with at least ``gap`` [m] between
    any two discs (rejection sampling, seeded)."""
    centres: list[tuple[float, float]] = []
    for r in radii:
        for _ in range(max_tries):
            c = (
                rng.uniform(-area_half[0] + r, area_half[0] - r),
                rng.uniform(-area_half[1] + r, area_half[1] - r),
            )
            if all(
                np.hypot(c[0] - o[0], c[1] - o[1]) >= r + ro + gap
                for o, ro in zip(centres, radii, strict=False)
            ):
                centres.append(c)
                break
        else:
            raise RuntimeError(f"could not place {len(radii)} objects with {gap} m gaps in {area_half}")
    return centres


def make_objects(
    rng: np.random.Generator, gap: float = 0.05, extra_discs: tuple[float, ...] = ()
) -> tuple[list[TrueObject], list[tuple[float, float]]]:
    """The four sample objects placed on the table, and the centres of ``extra_discs`` (e.g. the marker's
    footprint) placed with the same gap rule. Returns (objects, extra_centres)."""
    shapes = [
        ("box", "box", make_box((0.12, 0.07, 0.05)), 600.0, (0.78, 0.52, 0.25)),
        ("cylinder", "cylinder", make_cylinder(0.035, 0.11), 950.0, (0.20, 0.45, 0.80)),
        ("mug", "mug", make_mug(), 2300.0, (0.90, 0.88, 0.82)),
        ("stone", "stone", make_stone(rng), 2600.0, (0.50, 0.48, 0.45)),
    ]
    radii = [footprint_radius(s[2]) for s in shapes] + list(extra_discs)
    centres = place_discs(rng, radii, area_half=(0.32, 0.24), gap=gap)
    objects = []
    for (name, kind, mesh, density, rgb), (x, y) in zip(shapes, centres, strict=False):
        yaw = float(rng.uniform(-np.pi, np.pi))
        objects.append(TrueObject(name, kind, mesh, density, rgb, yaw_pose(x, y, yaw)))
    return objects, centres[len(shapes) :]
