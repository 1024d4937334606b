"""Options of the export stage: ``ExportCfg`` (how a scene becomes a package) and ``ValidateCfg`` (what it must pass)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from real2sim.errors import ConfigError

FORMATS = ("mjcf", "urdf")


def default_cache_dir() -> Path:
    """``$REAL2SIM_CACHE/coacd`` if set, else ``$XDG_CACHE_HOME/real2sim/coacd`` (``~/.cache/real2sim/coacd``)."""
    env = os.environ.get("REAL2SIM_CACHE")
    if env:
        return Path(env).expanduser() / "coacd"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "real2sim" / "coacd"


@dataclass(frozen=True)
class ValidateCfg:
    """Limits a package must meet (Menagerie's rule: it compiles, steps, and nothing warns)."""

    sim_seconds: float = 5.0
    """Simulated time [s] stepped from the ``home`` keyframe."""
    max_penetration: float = 1e-3
    """Largest allowed initial penetration [m] between any two geoms at the ``home`` keyframe."""
    max_drift: float = 1e-3
    """Largest allowed displacement [m] of a resting object's origin after ``sim_seconds``."""
    max_hulls: int | None = None
    """Hull budget per object; None = read it from the package's ``export.json`` (default 32)."""
    max_hull_vertices: int | None = None
    """Vertex budget per hull; None = read it from the package's ``export.json`` (default 64)."""
    max_surface_distance: float = 0.1
    """Largest allowed collision-to-surface Hausdorff distance, as a fraction of the object's bounding-box diagonal."""
    samples: int = 1000
    """Surface sample points per object for the collision-to-surface distance (seeded). 1000 resolve a 10 %-of-diagonal
    limit with ample margin and halve the check's time (the benchmark measures fidelity with 3000)."""
    check_urdf: bool = True
    """Also load the URDF (if present) in MuJoCo and in yourdfpy."""

    def validate(self) -> None:
        if not self.sim_seconds > 0:
            raise ConfigError(f"sim_seconds must be > 0, got {self.sim_seconds}")
        for n in ("max_penetration", "max_drift", "max_surface_distance"):
            if not getattr(self, n) > 0:
                raise ConfigError(f"{n} must be > 0, got {getattr(self, n)}")
        for n in ("max_hulls", "max_hull_vertices"):
            v = getattr(self, n)
            if v is not None and v < 1:
                raise ConfigError(f"{n} must be >= 1, got {v}")
        if self.samples < 100:
            raise ConfigError(f"samples must be >= 100, got {self.samples}")


@dataclass(frozen=True)
class ExportCfg:
    """How a ``Scene`` becomes a sim package (DESIGN §4, Menagerie shape)."""

    scene_dir: Path | None = None
    """Scene folder (``scene.json`` + ``meshes/``) read by ``run_export``."""
    out_dir: Path | None = None
    """Package folder to write (replaced atomically)."""
    name: str = ""
    """Model name (file stem of ``<name>.xml`` / ``<name>.urdf``); empty = the scene folder's name."""
    formats: tuple[str, ...] = FORMATS
    """Which model files to write: any of ``mjcf``, ``urdf``."""
    max_hulls: int = 32
    """Collision budget: convex hulls per object (MuJoCo/PhysX friendly)."""
    max_hull_vertices: int = 64
    """Collision budget: vertices per hull (PhysX's limit is 255; MuJoCo is fastest with few)."""
    collision_faces: int = 1200
    """Faces the watertight mesh is decimated to before convex decomposition (speed; fidelity is checked)."""
    visual_faces: int = 20000
    """Face budget of the visual mesh (decimated, vertex colours kept)."""
    coacd_threshold: float = 0.05
    """CoACD concavity threshold (smaller = more hulls, closer fit, slower). 0.05 (CoACD's own default) is the
    largest value at which our hulls are as close to the surface as obj2mjcf's unbudgeted ones on the benchmark's
    non-convex meshes; 0.08 left the mug cavity a third filled, 0.04 costs 1.5x the time for a little more IoU."""
    coacd_resolution: int = 500
    """CoACD sampling resolution for the concavity metric."""
    coacd_mcts_iterations: int = 20
    """CoACD Monte-Carlo tree search iterations per cut. 20 instead of 40: CoACD's search is most of the collision
    time, and ``refine`` recovers the cuts a shorter search misses. Measured on the benchmark meshes (collision time,
    2 threads; Hausdorff at 100,000 samples, IoU), 40 -> 20: bunny 7.5 -> 5.9 s, 4.81 -> 5.24 mm, IoU 0.950 -> 0.953;
    mug 4.4 -> 2.9 s, 1.64 -> 1.68 mm, IoU 0.915 -> 0.924; stone 7.2 -> 5.3 s, 2.61 -> 2.72 mm, IoU 0.974 -> 0.970;
    OSD object_1 3.8 -> 2.7 s, 5.73 -> 4.94 mm; OSD object_2 1.5 -> 1.1 s, unchanged. (30 gave the same hulls as 40
    on four of the five and saved 10 %.)"""
    coacd_mcts_depth: int = 2
    """CoACD search depth: how many cuts ahead each cut is chosen for. 1 (greedy) halves the time on smooth shapes
    but over-cuts cavities (a mug: > 32 parts, whose pairwise merge then took 3 minutes), so 2."""
    coacd_mcts_nodes: int = 10
    """CoACD candidate cutting planes per search node."""
    coacd_full_search_faces: int = 500
    """Meshes with at most this many faces (after decimation) are cut with a wider CoACD search (60 iterations,
    depth 3, 20 nodes) instead of the three settings above: on a low-poly mesh it still takes a fraction of a second
    and places cuts exactly (an L block: hull bulge 0.19 -> 0.11 mm, 0.1 -> 0.2 s). The nodes matter, not the
    iterations: on an L, T, U and stair block, seeds 0-2, 60 iterations gave the same hulls' Hausdorff as CoACD's 150
    (within 0.01 mm) in 35-40 % less time; 10 nodes left 0.10-0.19 mm."""
    refine_tolerance: float = 0.01
    """After CoACD, hulls whose surface lies more than this fraction of the bounding-box diagonal outside the mesh
    are split (worst first, plane cuts through the bulge) while the hull budget has room; 0 = off. CoACD stops at a
    concavity measured on the whole object's scale, which leaves a hull bridging a dent by 1.5-2 % of the object's
    size (its defaults too) while most of the budget is unused; 1 % is about a depth scan's own error at arm's length
    for a 20-40 cm object, and costs a few hundred milliseconds on a non-convex object."""
    refine_planes: int = 6
    """Candidate cutting planes per split, evenly turned (30 degrees apart for 6) about the bulge direction; the one
    whose new hulls bulge least is taken."""
    refine_samples: int = 12000
    """Surface samples spread over all hulls (by area, seeded) to measure how far each bulges past the mesh. A
    bulge's peak is narrow: 2000 missed it (a hull looked within tolerance and was never split); 8000 vs 2000 on the
    benchmark (20,000-sample Hausdorff): mug 2.16 -> 1.66 mm, stone 2.98 -> 2.65 mm, OSD object_1 6.06 -> 4.34 mm.
    12000 vs 8000 (100,000-sample Hausdorff, IoU from 400,000 points): bunny 5.24 -> 4.73 mm (IoU 0.9531 ->
    0.9525), mug 1.67 -> 1.67 mm (IoU 0.9236 -> 0.9238), stone 3.18 -> 2.72 mm (IoU 0.9680 -> 0.9712), OSD object_1
    4.77 -> 4.02 mm (IoU 0.9692 -> 0.9710), OSD object_2 2.87 -> 2.80 mm (IoU 0.9721 -> 0.9755), for about 0.3 s more
    on OSD object_1. 16000 was no better (stone IoU 0.9685, OSD object_1 4.55 mm): past 12000 the choice of cuts, not
    the estimate, varies."""
    refine_merge_pairs: int = 40
    """Touching hull pairs (least added volume first) tried for a merge when the budget is full (``refine``)."""
    cover: bool = True
    """After refinement, give every full-resolution vertex that decimation cut off (outside the decimated mesh and
    every hull) to the hull covering its patch of the decimated surface, and cut that hull to the vertex budget
    again (``cover_surface``). Measured on the sample stone: uncovered volume 0.48 % -> 0.09 %, IoU +0.002; costs
    0.2-0.3 s per non-convex object."""
    refit: bool = False
    """After refinement, grow each hull to the full-resolution vertices it nearly covers (undoes the decimation's
    shrinkage; cheap), then cut it to the vertex budget again. Off by default: with ``refit_distance`` 0.005 it
    measured +0.0013 IoU on the sample stone but +0.3-0.4 mm Hausdorff on the bunny and an OSD scan object (a vertex
    taken in near a dent widens the hull over it)."""
    refit_distance: float = 0.02
    """How far [fraction of the bounding-box diagonal] outside every hull a full-resolution vertex may be and still be
    taken into its nearest hull by ``refit``."""
    primitives: bool = True
    """Use a box / cylinder / sphere / capsule instead of hulls where one fits within ``primitive_tolerance``."""
    primitive_tolerance: float = 0.02
    """A primitive fits if every surface sample lies within this fraction of the bounding-box diagonal of it and
    the volumes agree within 3x this fraction."""
    seed: int = 0
    """Seed of every random choice (CoACD, surface sampling)."""
    workers: int = 0
    """Parallel worker processes for per-object work; 0 = one per core, 1 = in this process."""
    cache: bool = True
    """Reuse decompositions cached by mesh content hash + options."""
    cache_dir: Path | None = None
    """Decomposition cache; None = ``default_cache_dir()`` (``$REAL2SIM_CACHE`` overrides)."""
    render: bool = True
    """Write PNG renders of each object's visual mesh beside its collision geometry (MuJoCo offscreen, EGL)."""
    timestep: float = 0.002
    """MuJoCo time step [s] written into the model."""
    validate_cfg: ValidateCfg = field(default_factory=ValidateCfg)
    """Checks the package must pass before ``export`` reports success."""

    def validate(self) -> None:
        bad = [f for f in self.formats if f not in FORMATS]
        if bad or not self.formats:
            raise ConfigError(
                f"--format must be a comma list of {', '.join(FORMATS)}; got {','.join(self.formats)}"
            )
        if "mjcf" not in self.formats:
            raise ConfigError(
                "--format must include mjcf (the package is validated by compiling it in MuJoCo)"
            )
        if self.max_hulls < 1:
            raise ConfigError(f"--max-hulls must be >= 1, got {self.max_hulls}")
        if not 4 <= self.max_hull_vertices <= 255:
            raise ConfigError(f"--max-hull-vertices must be in [4, 255], got {self.max_hull_vertices}")
        if self.collision_faces < 100 or self.visual_faces < 100:
            raise ConfigError("collision_faces and visual_faces must be >= 100")
        if not 0 < self.coacd_threshold < 1:
            raise ConfigError(f"coacd_threshold must be in (0, 1), got {self.coacd_threshold}")
        if not 0 <= self.refine_tolerance < 0.5:
            raise ConfigError(f"refine_tolerance must be in [0, 0.5), got {self.refine_tolerance}")
        if self.coacd_full_search_faces < 0:
            raise ConfigError(f"coacd_full_search_faces must be >= 0, got {self.coacd_full_search_faces}")
        if self.refine_planes < 1 or self.refine_samples < 100 or self.refine_merge_pairs < 1:
            raise ConfigError("refine_planes and refine_merge_pairs must be >= 1 and refine_samples >= 100")
        if not 0 < self.primitive_tolerance < 0.5:
            raise ConfigError(f"primitive_tolerance must be in (0, 0.5), got {self.primitive_tolerance}")
        if self.workers < 0:
            raise ConfigError(f"--workers must be >= 0, got {self.workers}")
        if not 0 < self.timestep <= 0.01:
            raise ConfigError(f"timestep must be in (0, 0.01] s, got {self.timestep}")
        self.validate_cfg.validate()

    def decomposition_options(self) -> dict[str, object]:
        """The options that shape collision geometry (part of the cache key and the README)."""
        return {
            "max_hulls": self.max_hulls,
            "max_hull_vertices": self.max_hull_vertices,
            "collision_faces": self.collision_faces,
            "coacd_threshold": self.coacd_threshold,
            "coacd_resolution": self.coacd_resolution,
            "coacd_mcts_iterations": self.coacd_mcts_iterations,
            "coacd_mcts_depth": self.coacd_mcts_depth,
            "coacd_mcts_nodes": self.coacd_mcts_nodes,
            "coacd_full_search_faces": self.coacd_full_search_faces,
            "cover": self.cover,
            "refit": self.refit,
            "refit_distance": self.refit_distance,
            "refine_tolerance": self.refine_tolerance,
            "refine_planes": self.refine_planes,
            "refine_samples": self.refine_samples,
            "refine_merge_pairs": self.refine_merge_pairs,
            "primitives": self.primitives,
            "primitive_tolerance": self.primitive_tolerance,
            "seed": self.seed,
        }
