"""``PointCloudReconCfg``: every option of point-cloud reconstruction (re-exported by ``real2sim.recon.pointcloud.run``)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from real2sim.errors import ConfigError
from real2sim.recon.io.units import UNITS, Units

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class PointCloudReconCfg:
    """Options of ``real2sim recon pointcloud``. Lengths in metres."""

    inputs: tuple[Path, ...] = ()
    """Point-cloud files of one scene (first file: the one ``point_labels.npy`` indexes)."""
    out_dir: Path | None = None
    """Scene folder to write (``scene.json`` + ``meshes/``); ``None``: return the result only."""
    overwrite: bool = False
    """Replace the output folder even when it holds files real2sim did not write (never an input, ~ or /)."""
    units: Units = "m"
    """What one file unit is: ``m``, ``cm`` or ``mm``."""
    poses: Path | None = None
    """Scan poses: JSON ``{file name: world_from_sensor 4x4}`` or a ``bun.conf``-style text file
    (``bmesh <file> tx ty tz qx qy qz qw``). ``None``: several scans are registered globally."""
    object_only: bool = False
    """The scans show one object and no support (turntable scan): no plane is fitted, the object is closed alone."""
    save_point_labels: bool = False
    """Write ``point_labels.npy`` (one int32 per point of the first input: -1 removed, 0 support, k object k)."""
    sensor_at_origin: bool = True
    """Assume each file is in its sensor's frame (sensor at the origin) when neither the format nor
    ``sensor_origin`` says where it was. Origins that cannot be the sensor's are detected and not used."""
    sensor_origin: tuple[float, ...] = ()
    """Where the sensor was, ``X,Y,Z`` in the files' own coordinates and units; overrides a PCD ``VIEWPOINT`` or
    E57 scan pose. Empty: as the files say (or ``sensor_at_origin``)."""
    voxel: float = 0.005
    """Voxel size [m] of the early downsampling used for the plane, segmentation and normals."""
    plane_distance: float = 0.01
    """RANSAC inlier distance [m] of the support plane."""
    plane_min_fraction: float = 0.2
    """The support plane must hold at least this share of the (downsampled) points."""
    min_height: float = 0.01
    """Points this far [m] above the support or more are object candidates."""
    max_height: float = 1.0
    """Points higher than this [m] above the support are ignored."""
    crop_margin: float = 0.0
    """Keep points up to this far [m] outside the support's seen extent."""
    cluster_tolerance: float = 0.015
    """Points closer than this [m] belong to the same object (before colour splitting)."""
    colour_split: float | None = None
    """RGB distance (0..1) at which a region grown inside each segment stops (a plain colour split on top of the
    convexity split); ``None`` turns it off."""
    concave_split: float | None = 10.0
    """Separate touching, stacked and cluttered objects: clusters split into locally convex connected surface patches
    (LCCP), a concave connection whose normals differ by more than this [deg] parts objects; support relations and
    surfaces continuing behind an occluder join the parts of one object (docs/segmentation.md). 0 or ``None``:
    off (plain Euclidean clusters)."""
    min_object_points: int = 100
    """Objects with fewer downsampled points are dropped."""
    min_object_size: float = 0.02
    """Objects whose largest extent [m] is smaller are dropped."""
    max_object_size: float = 1.5
    """Objects whose largest extent [m] is larger are dropped."""
    outlier_neighbors: int = 16
    """Statistical outlier removal: neighbours considered (0 turns it off)."""
    outlier_std: float = 2.5
    """Statistical outlier removal: points whose mean neighbour distance exceeds mean + this many std go."""
    normal_radius: float = 0.015
    """Radius [m] for normal estimation."""
    mesh_voxel: float = 0.002
    """Finest meshing grid spacing [m]."""
    mesh_max_cells: int = 100
    """At most this many grid cells along an object's largest extent (coarser grid for large objects)."""
    max_triangles: int = 20000
    """Triangle budget per object mesh."""
    symmetry_completion: bool = True
    """Complete a thin-walled object's unseen side through a mirror plane or axis the scan itself supports."""
    thin_wall_grid: bool = True
    """Mesh thin-walled objects on the finest grid, then decimate them to ``max_triangles``."""
    register_voxel: float = 0.0
    """Voxel [m] for global registration features; 0: 1/100 of the scans' bounding-box diagonal."""
    register_min_fitness: float = 0.3
    """A scan whose best ICP overlap fraction to the others is below this is reported as unregistrable."""
    density: float = 500.0
    """Density [kg/m^3] given to reconstructed objects."""
    friction: tuple[float, float, float] = (0.8, 0.005, 0.0001)
    """MuJoCo friction (sliding, torsional, rolling) of the objects."""
    max_extent: float = 200.0
    """A cloud larger than this [m] after unit scaling is rejected as wrong units."""
    min_extent: float = 0.005
    """A cloud smaller than this [m] after unit scaling is rejected as wrong units."""
    seed: int = 0
    """Seed of every random choice (RANSAC), so outputs are reproducible."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Free-form notes copied into the provenance."""

    def validate(self) -> PointCloudReconCfg:
        """Check values; raise ``ConfigError`` naming the option. Returns ``self``."""
        if self.units not in UNITS:
            raise ConfigError(f"units must be one of {', '.join(UNITS)}; got {self.units!r}")
        positive = ("voxel", "plane_distance", "min_height", "max_height", "cluster_tolerance", "min_object_size",
                    "max_object_size", "normal_radius", "mesh_voxel", "density", "max_extent", "min_extent",
                    "outlier_std")  # fmt: skip
        for name in positive:
            v = getattr(self, name)
            if not v > 0:
                raise ConfigError(f"{name} must be > 0; got {v!r}")
        if not 0 < self.plane_min_fraction < 1:
            raise ConfigError(f"plane_min_fraction must be in (0, 1); got {self.plane_min_fraction}")
        if self.min_height >= self.max_height:
            raise ConfigError("min_height must be below max_height")
        if self.min_object_size >= self.max_object_size:
            raise ConfigError("min_object_size must be below max_object_size")
        if self.mesh_max_cells < 8 or self.max_triangles < 12 or self.min_object_points < 1:
            raise ConfigError(
                "mesh_max_cells >= 8, max_triangles >= 12 and min_object_points >= 1 are required"
            )
        if self.concave_split is not None and not 0 <= self.concave_split < 180:
            raise ConfigError(f"concave_split must be in [0, 180) degrees or None; got {self.concave_split}")
        if self.colour_split is not None and not self.colour_split > 0:
            raise ConfigError(f"colour_split must be > 0 or None; got {self.colour_split}")
        if self.register_voxel < 0 or not 0 <= self.register_min_fitness <= 1:
            raise ConfigError("register_voxel must be >= 0 and register_min_fitness in [0, 1]")
        if len(self.sensor_origin) not in (0, 3) or not all(math.isfinite(x) for x in self.sensor_origin):
            raise ConfigError(f"sensor_origin must be three finite numbers X,Y,Z; got {self.sensor_origin!r}")
        if self.save_point_labels and self.out_dir is None:
            raise ConfigError("save_point_labels needs out_dir")
        return self

    def options(self) -> dict[str, Any]:
        """The options that shape the result, JSON-ready (for provenance)."""
        d = asdict(self)
        d.pop("inputs")
        d.pop("out_dir")
        d.pop("overwrite")
        d["poses"] = None if self.poses is None else Path(self.poses).name
        d["friction"] = list(self.friction)
        d["sensor_origin"] = list(self.sensor_origin)
        if not self.sensor_origin:  # unset: left out, so unchanged runs keep their provenance
            d.pop("sensor_origin")
        return d

    def origin_m(self) -> np.ndarray | None:
        """``sensor_origin`` in metres, or ``None`` when not given."""
        import numpy as np

        return (
            np.asarray(self.sensor_origin, dtype=np.float64) * UNITS[self.units]
            if self.sensor_origin
            else None
        )
