"""``TwinCfg`` (how a robot and a scene package become one twin) and ``ReplayCfg`` (how real episodes are played in
it). Light: the CLI's options are generated from these fields, so no numerical library is imported here."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from real2sim.errors import ConfigError, InputError

Units = Literal["normalized", "degrees", "radians"]
"""Unit of a LeRobot dataset's joint values: LeRobot's range-normalised -100..100 (grippers 0..100), degrees about the
middle of the calibrated range (``use_degrees``; grippers still 0..100), or radians."""

PREFIX_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*[/_\-:.]$")
"""A name prefix: a letter, then letters, digits, ``_`` or ``-``, ending in a separator (``robot/``, ``arm_``)."""


def _exists(path: Path | None, what: str, kind: str = "any") -> None:
    if path is None:
        return
    p = Path(path)
    if not p.exists():
        raise InputError(p, f"{what} does not exist")
    if kind == "dir" and not p.is_dir():
        raise InputError(p, f"{what} must be a folder")
    if kind == "file" and not p.is_file():
        raise InputError(p, f"{what} must be a file")


def _finite(values: tuple[float, ...], what: str) -> None:
    if not all(math.isfinite(v) for v in values):
        raise ConfigError(f"{what} must be finite numbers, got {','.join(str(v) for v in values)}")


@dataclass(frozen=True)
class TwinCfg:
    """Options of ``real2sim twin``. Lengths in metres, angles as said per field."""

    robot: Path
    """The robot's MJCF (Menagerie-style: meshes beside it), attached unmodified under ``prefix``."""
    scene: Path
    """A scene package written by real2sim export (``export.json``, ``<name>.xml``, ``scene.xml``, ``assets/``)."""
    out_dir: Path | None = None
    """The twin folder (scene.xml, assets/, twin.json, README.md, USD where it converts); None: nothing written."""
    overwrite: bool = False
    """Replace the output folder even when it holds files real2sim did not write (never an input, ~ or /)."""
    calibration: Path | None = None
    """A real2sim calibrate output folder (result.json, randomization.yaml) whose values are applied to the robot."""
    base_pose: tuple[float, ...] = ()
    """Where the base stands in the scene frame: X,Y (on the support at that point), X,Y,YAW_DEG, or
    X,Y,Z,QW,QX,QY,QZ; empty: the support's centre (or the coarse pose the marker / ICP route refines)."""
    prefix: str = "robot/"
    """Prefix of every name of the robot (bodies, joints, actuators, classes, assets, keyframes) in the twin."""
    home: tuple[float, ...] = ()
    """The robot's joint positions [rad or m] at the home keyframe, in the model's joint order; empty: the robot's
    own ``home`` keyframe, else its reference pose (qpos0)."""
    marker_images: Path | None = None
    """Folder of the capture's photos in which the base's printed marker is seen (marker route)."""
    marker_cameras: Path | None = None
    """The photos' cameras in the scene frame: ``cameras.json`` as real2sim recon photos writes it."""
    marker_size: float = 0.0
    """Side of the marker's black square [m] (marker route)."""
    marker_dictionary: str = "DICT_4X4_50"
    """OpenCV ArUco dictionary of the marker."""
    marker_id: int = 0
    """Marker id within the dictionary."""
    base_from_marker: tuple[float, ...] = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
    """The marker's pose in the base frame, X,Y,Z,QW,QX,QY,QZ (marker centre; its x axis along the first edge)."""
    icp_scan: Path | None = None
    """A scan of the scene with the robot in it (PLY/PCD/XYZ/NPY): the robot's mesh is registered into it (ICP)."""
    icp_scene: Path | None = None
    """scene.json whose world_from_input places ``icp_scan`` in the scene frame; None: the scan is in the scene frame."""
    icp_max_distance: float = 0.02
    """ICP correspondence distance [m]: the coarse pose must be this close to the true one."""
    cameras: Path | None = None
    """The capture's cameras (cameras.json of real2sim recon photos): a camera is added to the twin where each was,
    for rendered datasets; None: the marker route's cameras, else one overview camera."""
    cut_margin: float = 0.003
    """Scene geometry closer than this [m] inside the robot's links at home is the scanned robot and is cut out."""
    rest_seconds: float = 2.0
    """Simulated time [s] over which the home keyframe must rest."""
    rest_limit: float = 1e-3
    """Largest motion [m] of any object over ``rest_seconds`` from home (the arm holding its pose)."""
    usd: bool = True
    """Also write the twin as USD (usd-core, UsdPhysics) where the robot converts; else say why not."""

    def validate(self) -> None:
        _exists(self.robot, "robot model", "file")
        _exists(self.scene, "scene package", "dir")
        _exists(self.calibration, "calibration folder", "dir")
        _exists(self.marker_images, "marker photo folder", "dir")
        _exists(self.marker_cameras, "cameras file", "file")
        _exists(self.icp_scan, "scan", "file")
        _exists(self.cameras, "cameras file", "file")
        _exists(self.icp_scene, "scene.json", "file")
        if len(self.base_pose) not in (0, 2, 3, 7):
            raise ConfigError(
                f"base_pose takes X,Y or X,Y,YAW_DEG or X,Y,Z,QW,QX,QY,QZ; got {len(self.base_pose)} numbers"
            )
        _finite(self.base_pose, "base_pose")
        if len(self.base_pose) == 7 and not 0.5 < math.hypot(*self.base_pose[3:]) < 2.0:
            raise ConfigError(f"base_pose's quaternion {self.base_pose[3:]} is not a rotation (norm ~ 1)")
        if not PREFIX_RE.match(self.prefix):
            raise ConfigError(
                f"prefix {self.prefix!r} must start with a letter and end with a separator (e.g. robot/)"
            )
        _finite(self.home, "home")
        if (self.marker_images is None) != (self.marker_cameras is None):
            raise ConfigError("the marker route needs both marker_images and marker_cameras")
        if self.marker_images is not None:
            if not self.marker_size > 0:
                raise ConfigError("the marker route needs marker_size > 0 [m]")
            if self.icp_scan is not None:
                raise ConfigError(
                    "give one base route: the marker (marker_images) or ICP (icp_scan), not both"
                )
        if len(self.base_from_marker) != 7:
            raise ConfigError("base_from_marker takes X,Y,Z,QW,QX,QY,QZ")
        _finite(self.base_from_marker, "base_from_marker")
        if self.icp_scene is not None and self.icp_scan is None:
            raise ConfigError("icp_scene places icp_scan; give the scan too")
        for name in ("icp_max_distance", "rest_seconds", "rest_limit", "cut_margin"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v > 0):
                raise ConfigError(f"{name} must be > 0, got {v}")
        if self.rest_seconds > 60:
            raise ConfigError(f"rest_seconds must be at most 60 s, got {self.rest_seconds:g}")

    @property
    def route(self) -> str:
        """How the base pose is found: ``pose`` (given), ``marker`` or ``icp``."""
        if self.marker_images is not None:
            return "marker"
        return "icp" if self.icp_scan is not None else "pose"


MODE_RE = re.compile(r"^(kinematic|actuated|resync:([1-9][0-9]*))$")


@dataclass(frozen=True)
class ReplayCfg:
    """Options of ``real2sim replay``."""

    twin: Path
    """A twin folder written by real2sim twin (twin.json, scene.xml)."""
    episodes: Path
    """A LeRobot dataset folder (v2.1 or v3.0), or a CSV / Parquet log read through ``map``."""
    out_dir: Path | None = None
    """Output folder (replay.json, traces PNG, dataset/); None: nothing written."""
    overwrite: bool = False
    """Replace the output folder even when it holds files real2sim did not write (never an input, ~ or /)."""
    mode: str = "actuated"
    """kinematic (joint positions set), actuated (actions sent to the actuators) or resync:N (actuated, the state
    set to the real one every N frames)."""
    episode: tuple[int, ...] = ()
    """Episode indices to replay; empty: every episode of the dataset."""
    max_frames: int | None = None
    """Replay at most this many frames of each episode (a quick look); None: whole episodes."""
    map: Path | None = None
    """TOML map from log columns to the robot's joints and actuators (as real2sim calibrate reads it); needed for
    CSV / Parquet logs, optional for LeRobot datasets (their features name the joints)."""
    lerobot_calibration: Path | None = None
    """LeRobot calibration JSON of the robot ({motor: {drive_mode, range_min, range_max}}); None: the dataset's
    meta/calibration.json if it has one, else each joint's normalised range is taken as the model joint's range."""
    units: Units = "normalized"
    """Unit of a LeRobot dataset's joint values: normalized (-100..100, grippers 0..100), degrees or radians."""
    zero_to_100: tuple[str, ...] = ("gripper",)
    """Motors LeRobot normalises to 0..100 (RANGE_0_100) instead of -100..100."""
    variations: int = 0
    """Randomised copies per episode (object start poses, and physics within the calibration's ranges)."""
    object_shift: float = 0.03
    """Half-width [m] of the uniform shift of each object's start position (x and y) in a variation."""
    object_yaw: float = 15.0
    """Half-width [deg] of the uniform turn of each object about the vertical in a variation."""
    seed: int = 0
    """Seed of the variations' draws."""
    dataset: bool = True
    """Write the replayed episodes as a LeRobot v3.0 dataset (OUT/dataset/)."""
    render: bool = False
    """Add rendered images to the dataset from the twin's cameras (observation.images.<camera>)."""
    render_width: int = 320
    """Width [px] of rendered images."""
    render_height: int = 240
    """Height [px] of rendered images."""
    plots: bool = True
    """Write the real vs sim joint traces (traces_episode_NNNNNN.png)."""
    max_lag: float = 0.5
    """Largest lag [s] searched between the real and simulated joint traces."""

    def validate(self) -> None:
        _exists(self.twin, "twin folder", "dir")
        _exists(self.episodes, "episodes")
        _exists(self.map, "map", "file")
        _exists(self.lerobot_calibration, "LeRobot calibration file", "file")
        if not (Path(self.twin) / "twin.json").is_file():
            raise InputError(self.twin, "not a twin folder (no twin.json; see real2sim twin)")
        if not MODE_RE.match(self.mode):
            raise ConfigError(
                f"mode must be kinematic, actuated or resync:N (N >= 1 frames), got {self.mode!r}"
            )
        if self.units not in get_args(Units):
            raise ConfigError(f"units must be one of {', '.join(get_args(Units))}, got {self.units!r}")
        if any(e < 0 for e in self.episode):
            raise ConfigError(f"episode indices are >= 0, got {self.episode}")
        if self.max_frames is not None and self.max_frames < 2:
            raise ConfigError(f"max_frames must be >= 2, got {self.max_frames}")
        if not 0 <= self.variations <= 1000:
            raise ConfigError(f"variations must be in 0..1000, got {self.variations}")
        for name in ("object_shift", "object_yaw"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0):
                raise ConfigError(f"{name} must be >= 0, got {v}")
        if not (math.isfinite(self.max_lag) and self.max_lag > 0):
            raise ConfigError(f"max_lag must be > 0 s, got {self.max_lag}")
        if not (16 <= self.render_width <= 4096 and 16 <= self.render_height <= 4096):
            raise ConfigError("render_width and render_height must be in 16..4096 px")
        if self.render and not self.dataset:
            raise ConfigError("render adds images to the dataset; it needs dataset on")

    @property
    def resync_every(self) -> int | None:
        """N of ``resync:N`` (frames), else None."""
        m = MODE_RE.match(self.mode)
        return int(m.group(2)) if m and m.group(2) else None
