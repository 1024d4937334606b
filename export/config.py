"""Options of the export stage: ``ExportCfg`` (how a scene becomes a package) and ``ValidateCfg`` (what it must pass)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from real2sim.errors import ConfigError
from real2sim.export.physics.values import Given, parse_given

Format = Literal["mjcf", "urdf", "usd"]
FORMATS: tuple[Format, ...] = ("mjcf", "urdf", "usd")
COLLISION = MappingProxyType({"collision": True})
"""Field metadata of the ``ExportCfg`` options that shape collision geometry (``collision_options``)."""


def default_cache_dir() -> Path:
    """``$REAL2SIM_CACHE/coacd`` if set, else ``$XDG_CACHE_HOME/real2sim/coacd`` (``~/.cache/real2sim/coacd``)."""
    env = os.environ.get("REAL2SIM_CACHE")
    if env:
        return Path(env).expanduser() / "coacd"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "real2sim" / "coacd"


SIM_SECONDS_MAX = 600.0
"""Longest validation run [s] of simulated time (stepped in bounded chunks; a rest check needs seconds)."""
SAMPLES_MAX = 1_000_000
"""Most surface samples per object for the collision-to-surface distance (memory grows with them)."""


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
    """Surface sample points per object for the collision-to-surface distance (seeded)."""
    check_urdf: bool = True
    """Also load the URDF (if present) in MuJoCo and in yourdfpy."""
    engines: tuple[str, ...] = ("usd", "pybullet", "webots", "newton")
    """Engine checks to run where the package has their files (``export.checks.engines``): ``usd`` (usd-core),
    ``pybullet``, ``webots`` (urdf2webots), ``newton``; each is skipped with one line if its client is missing."""
    strict: bool = False
    """Refuse a package whose collision-to-surface distance is over ``max_surface_distance`` (else: a warning)."""

    def validate(self) -> None:
        if not 0 < self.sim_seconds <= SIM_SECONDS_MAX:
            raise ConfigError(
                f"--sim-seconds must be in (0, {SIM_SECONDS_MAX:g}] s, got {self.sim_seconds:g}"
            )
        if not 100 <= self.samples <= SAMPLES_MAX:
            raise ConfigError(f"--samples must be in [100, {SAMPLES_MAX}], got {self.samples}")
        for n in ("max_penetration", "max_drift", "max_surface_distance"):
            if not getattr(self, n) > 0:
                raise ConfigError(f"{n} must be > 0, got {getattr(self, n)}")
        for n in ("max_hulls", "max_hull_vertices"):
            v = getattr(self, n)
            if v is not None and v < 1:
                raise ConfigError(f"{n} must be >= 1, got {v}")
        bad = [e for e in self.engines if e not in ("usd", "pybullet", "webots", "newton")]
        if bad:
            raise ConfigError(f"engines must be among usd, pybullet, webots, newton; got {', '.join(bad)}")


@dataclass(frozen=True)
class ExportCfg:
    """How a ``Scene`` becomes a sim package (DESIGN §4, Menagerie shape)."""

    scene_dir: Path | None = None
    """Scene folder (``scene.json`` + ``meshes/``) read by ``run_export``."""
    out_dir: Path | None = None
    """Package folder to write (replaced atomically)."""
    overwrite: bool = False
    """Replace the output folder even when it holds files real2sim did not write (never an input, ~ or /)."""
    name: str = ""
    """Model name (file stem of ``<name>.xml`` / ``<name>.urdf``); empty = the scene folder's name."""
    formats: tuple[Format, ...] = FORMATS
    """Which model files to write: any of ``mjcf``, ``urdf`` (the scene and ``urdf/<object>.urdf``), ``usd``."""
    max_hulls: int = field(default=32, metadata=COLLISION)
    """Collision budget: convex hulls per object (MuJoCo/PhysX friendly)."""
    max_hull_vertices: int = field(default=64, metadata=COLLISION)
    """Collision budget: vertices per hull (PhysX's limit is 255; MuJoCo is fastest with few)."""
    collision_faces: int = field(default=1200, metadata=COLLISION)
    """Faces the watertight mesh is decimated to before convex decomposition (speed; fidelity is checked)."""
    visual_faces: int = 20000
    """Face budget of the visual mesh (decimated, vertex colours kept)."""
    coacd_threshold: float = field(default=0.08, metadata=COLLISION)
    """CoACD concavity threshold (smaller = more hulls, closer fit, slower). Refinement splits the hulls that still
    bulge past ``fidelity_tolerance`` (docs/collision.md, "A coarser CoACD cut")."""
    coacd_resolution: int = field(default=500, metadata=COLLISION)
    """CoACD sampling resolution for the concavity metric."""
    coacd_mcts_iterations: int = field(default=20, metadata=COLLISION)
    """CoACD Monte-Carlo tree search iterations per cut."""
    coacd_mcts_depth: int = field(default=2, metadata=COLLISION)
    """CoACD search depth: how many cuts ahead each cut is chosen for."""
    coacd_mcts_nodes: int = field(default=10, metadata=COLLISION)
    """CoACD candidate cutting planes per search node."""
    coacd_full_search_faces: int = field(default=500, metadata=COLLISION)
    """Meshes with at most this many faces (after decimation) are cut with a wider CoACD search (60 iterations,
    depth 3, 20 nodes) instead of the three settings above."""
    cover: bool = field(default=True, metadata=COLLISION)
    """After refinement, grow each hull over the full-resolution vertices that decimation cut off from its patch of
    surface, then cut it to the vertex budget again (``cover_surface``)."""
    refit: bool = field(default=False, metadata=COLLISION)
    """After refinement, grow each hull to the full-resolution vertices it nearly covers, then cut it to the vertex
    budget again (off by default)."""
    refit_distance: float = field(default=0.02, metadata=COLLISION)
    """How far [fraction of the bounding-box diagonal] outside every hull a full-resolution vertex may be and still be
    taken into its nearest hull by ``refit``."""
    refine_tolerance: float = field(default=0.01, metadata=COLLISION)
    """Split hulls whose surface lies more than this fraction of the bounding-box diagonal outside the mesh (worst
    first, plane cuts through the bulge) while the hull budget has room; 0 = off."""
    refine_planes: int = field(default=6, metadata=COLLISION)
    """Candidate cutting planes per split, evenly turned (30 degrees apart for 6) about the bulge direction; the one
    whose new hulls bulge least is taken."""
    refine_samples: int = field(default=12000, metadata=COLLISION)
    """Surface samples spread over all hulls (by area, seeded) to measure how far each bulges past the mesh."""
    refine_merge_pairs: int = field(default=40, metadata=COLLISION)
    """Touching hull pairs (least added volume first) tried for a merge when the budget is full (``refine``)."""
    fidelity_tolerance: float = field(default=0.01, metadata=COLLISION)
    """Fewest collision pieces at this fidelity (fraction of the diagonal a hull may bulge past the surface)."""
    primitives: bool = field(default=True, metadata=COLLISION)
    """Use a box / cylinder / sphere / capsule instead of hulls where one fits within ``primitive_tolerance``."""
    primitive_tolerance: float = field(default=0.02, metadata=COLLISION)
    """A primitive fits if every surface sample lies within this fraction of the bounding-box diagonal of it and
    the volumes agree within 3x this fraction; past ``fidelity_tolerance`` it is kept only where the hulls are no
    closer (docs/collision.md)."""
    support_hull: bool = True
    """A dynamic object of several collision pieces meets the support through one more geom, the convex hull of its
    pieces, and its pieces meet only other objects (fewer contacts; MJCF and USD)."""
    seed: int = field(default=0, metadata=COLLISION)
    """Seed of every random choice (CoACD, surface sampling)."""
    workers: int = 0
    """Parallel worker processes for per-object work; 0 = one per core, 1 = in this process."""
    cache: bool = True
    """Reuse decompositions cached by mesh content hash + options."""
    cache_dir: Path | None = field(default=None, metadata={"hashed_path": True})
    """Decomposition cache; None = ``default_cache_dir()`` (``$REAL2SIM_CACHE`` overrides)."""
    render: bool = True
    """Write PNG renders of each object's visual mesh beside its collision geometry (MuJoCo offscreen, EGL)."""
    mass: tuple[str, ...] = ()
    """Weighed mass of an object, ``NAME=KG`` (repeatable; NAME: its scene or body name): inertia scales to it
    (full tensor, from the mesh volume)."""
    density: tuple[str, ...] = ()
    """Density of an object, ``NAME=KG_PER_M3`` (repeatable), instead of the scene's."""
    friction: tuple[str, ...] = ()
    """Sliding friction of an object, ``NAME=MU`` (repeatable), instead of the scene's or its material's."""
    material: tuple[str, ...] = ()
    """Material of an object, ``NAME=MATERIAL`` (repeatable): density and friction from the table
    (``export/physics/materials.py``: wood, plastic, steel, aluminium, glass, ceramic, cardboard, rubber, foam); a given
    mass, density or friction wins over it."""
    timestep: float = 0.002
    """MuJoCo time step [s] written into the model."""
    strict: bool = False
    """Refuse a package over the collision-to-surface limit instead of writing it with a warning."""
    validate_cfg: ValidateCfg = field(default_factory=lambda: ValidateCfg(engines=("usd", "webots")))
    """Checks the package must pass before ``export`` reports success (PyBullet's and Newton's run in ``real2sim validate``)."""

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
        if not 0 < self.fidelity_tolerance < 0.5:
            raise ConfigError(f"fidelity_tolerance must be in (0, 0.5), got {self.fidelity_tolerance}")
        if not 0 < self.primitive_tolerance < 0.5:
            raise ConfigError(f"primitive_tolerance must be in (0, 0.5), got {self.primitive_tolerance}")
        if self.workers < 0:
            raise ConfigError(f"--workers must be >= 0, got {self.workers}")
        if not 0 < self.timestep <= 0.01:
            raise ConfigError(f"timestep must be in (0, 0.01] s, got {self.timestep}")
        self.validate_cfg.validate()
        self.given()

    def given(self) -> dict[str, Given]:
        """The per-object values of ``mass``, ``density``, ``friction`` and ``material`` (``OptionError`` naming
        the option on a bad one)."""
        return parse_given(self.mass, self.density, self.friction, self.material)


def collision_options(cfg: ExportCfg) -> dict[str, object]:
    """The options that shape collision geometry (fields marked ``COLLISION``), in field order: part of the
    decomposition cache key and listed in the package README."""
    return {f.name: getattr(cfg, f.name) for f in fields(cfg) if f.metadata.get("collision")}
