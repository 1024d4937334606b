"""A capture session folder (DESIGN §5): what it holds, read from ``session.toml`` or found by its folders."""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from real2sim import physics
from real2sim.errors import InputError
from real2sim.export.physics.values import Given, material_problem, value_problem

if TYPE_CHECKING:
    from real2sim.recon.io.points import Units

LIDAR_EXT = (".ply", ".pcd", ".las", ".laz", ".e57", ".xyz", ".pts", ".txt", ".npy", ".bin")
IMAGE_EXT = (".jpg", ".jpeg", ".png", ".tif", ".tiff")
LOG_EXT = (".csv", ".gz", ".npz", ".parquet", ".bag", ".mcap", ".h5", ".hdf5")


@dataclass(frozen=True)
class MarkerSpec:
    """A printed fiducial of known size for metric scale."""

    dictionary: str = "DICT_4X4_50"
    """OpenCV ArUco dictionary name."""
    id: int = 0
    """Marker id within the dictionary."""
    size: float = 0.0
    """Side of the black square [m]."""


@dataclass(frozen=True)
class RobotSpec:
    """A robot model, its logs and what to fit."""

    model: Path
    """MJCF or URDF of the robot."""
    map: Path
    """TOML mapping log columns to model joints and actuators."""
    logs: tuple[Path, ...]
    """Logs the fit uses."""
    holdout: tuple[Path, ...] = ()
    """Logs kept out of the fit to measure sim-vs-real error."""
    fit: tuple[str, ...] = ()
    """Parameter names (``joint:*.damping`` ...)."""
    twin: bool = False
    """Compose the robot into the session's package as a twin (``OUT/twin/``, as ``real2sim twin``)."""
    base_pose: tuple[float, ...] = ()
    """Where the robot's base stands in the scene frame: [x, y], [x, y, yaw_deg] or [x, y, z, qw, qx, qy, qz]."""


@dataclass(frozen=True)
class Session:
    """Everything a ``real2sim process`` run can use from one capture folder."""

    root: Path
    name: str
    lidar: tuple[Path, ...] = ()
    """Point-cloud files."""
    lidar_poses: Path | None = None
    """JSON of ``{file name: world_from_sensor 4x4}`` when the scanner's poses are known."""
    lidar_units: Units = "m"
    lidar_object_only: bool = False
    """The scans show one object without a support (``recon pointcloud --object-only``)."""
    sensor_origin: tuple[float, ...] = ()
    """Where the scanner was, ``[x, y, z]`` in the scan files' coordinates and units (``--sensor-origin``)."""
    images: Path | None = None
    """Folder of photos."""
    marker: MarkerSpec | None = None
    known_distance: Path | None = None
    """TOML of a known distance between two points marked in the photos (``recon photos --known-distance``)."""
    photos_object_only: bool = False
    """The photos show one object without a support."""
    photos_scale: float | None = None
    """Known metres per SfM unit (``recon photos --scale``)."""
    colour_scans: bool | None = None
    """The photos colour the scans' object meshes (registered to them); ``None``: when the scans carry no colour."""
    camera_model: str | None = None
    """COLMAP camera model of ``intrinsics`` (``None``: the SfM default)."""
    intrinsics: tuple[float, ...] | None = None
    """Known camera parameters in the camera model's order, kept fixed (e.g. PINHOLE: fx, fy, cx, cy [px])."""
    splats: tuple[Path, ...] = ()
    splat_scale: float | None = None
    """Metres per splat unit (``recon splat --scale``)."""
    splat_object_only: bool = False
    """The splat shows one object without a support (e.g. cropped to it)."""
    density: float = 500.0
    """Default density of reconstructed objects [kg/m^3]."""
    friction: float = 0.8
    """Default sliding friction of reconstructed objects."""
    object_values: dict[str, Given] = field(default_factory=dict)
    """Known values of single objects (``[objects.NAME]``: mass, density, friction, material), for export."""
    robot: RobotSpec | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def sources(self) -> tuple[str, ...]:
        out = []
        if self.lidar:
            out.append("lidar")
        if self.images is not None:
            out.append("photos")
        if self.splats:
            out.append("splats")
        if self.robot is not None:
            out.append("robot")
        return tuple(out)


def _files(folder: Path, exts: tuple[str, ...]) -> tuple[Path, ...]:
    if not folder.is_dir():
        return ()
    return tuple(sorted(p for p in folder.iterdir() if p.is_file() and p.name.lower().endswith(exts)))


def _existing(root: Path, rel: str, toml: Path, what: str) -> Path:
    """``root / rel``, which must exist inside the session folder (symlinks followed): a session is self-contained,
    and a path to elsewhere (``/etc/...``, ``../other``) is refused."""
    if not isinstance(rel, str):
        raise InputError(toml, f"{what} must be a path string, got {rel!r}")
    p = (root / rel).resolve()
    if not p.is_relative_to(root.resolve()):
        raise InputError(
            toml, f"{what} {rel!r} lies outside the session folder {root}; sessions are self-contained"
        )
    if not p.exists():
        raise InputError(toml, f"{what} {rel!r} does not exist in {root}")
    return p


def _paths(section: dict[str, Any], key: str, name: str, item: type = str) -> list[Any]:
    """``section[key]`` as a list (absent: empty); a single value where a list belongs is refused, not iterated."""
    v = section.get(key, [])
    if not isinstance(v, list) or not all(
        isinstance(x, item) or (item is float and isinstance(x, int)) for x in v
    ):
        kind = "strings" if item is str else "numbers"
        raise ValueError(f"{name}.{key} must be a list of {kind}, got {v!r}")
    return v


def _flag(section: dict[str, Any], key: str, default: bool, name: str) -> bool:
    v = section.get(key, default)
    if not isinstance(v, bool):
        raise ValueError(f"{name}.{key} must be true or false, got {v!r}")
    return v


def _positive(section: dict[str, Any], key: str, name: str) -> float | None:
    if key not in section:
        return None
    v = float(section[key])
    if not v > 0:
        raise ValueError(f"{name}.{key} must be > 0, got {v}")
    return v


OBJECT_KEYS = ("mass", "density", "friction", "material")


def _object_values(objs: dict[str, Any]) -> dict[str, Given]:
    """``[objects.NAME]`` tables (the sub-tables of ``[objects]``): each object's known values, checked."""
    out = {}
    for name, tbl in objs.items():
        if not isinstance(tbl, dict):
            continue
        where = f"objects.{name}"
        bad = [k for k in tbl if k not in OBJECT_KEYS]
        if bad:
            raise ValueError(f"{where}: unknown key {bad[0]!r} (keys: {', '.join(OBJECT_KEYS)})")
        vals: dict[str, Any] = {}
        for key in ("mass", "density", "friction"):
            if key in tbl:
                v = tbl[key]
                if isinstance(v, bool) or not isinstance(v, int | float):
                    raise ValueError(f"{where}.{key} must be a number, got {v!r}")
                if (problem := value_problem(key, float(v))) is not None:
                    raise ValueError(f"{where}.{key} = {v}: {problem}")
                vals[key] = float(v)
        if "material" in tbl:
            m = tbl["material"]
            if not isinstance(m, str) or (problem := material_problem(m)) is not None:
                raise ValueError(f"{where}.material: {material_problem(str(m))}")
            vals["material"] = m.strip().lower()
        if "mass" in vals and "density" in vals:
            raise ValueError(f"{where} has both a mass and a density; give one")
        out[name] = Given(**vals)
    return out


def load_session(root: str | Path) -> Session:
    """Read ``root/session.toml`` if present, else discover ``lidar/ images/ splats/ logs/ robot/``."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise InputError(root, "no such session folder")
    toml = root / "session.toml"
    d: dict[str, Any] = {}
    if toml.exists() and not toml.is_file():
        raise InputError(toml, "not a regular file")
    if toml.is_file():
        try:
            d = tomllib.loads(toml.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InputError(toml, f"malformed TOML ({exc})") from None
    try:
        return _session_from_dict(root, toml, d)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(toml, f"invalid session: {exc}") from None


KNOWN_KEYS: dict[str, tuple[str, ...]] = {
    "session": ("name",),
    "lidar": ("files", "poses", "units", "sensor_origin", "object_only"),
    "objects": ("object_only", "density", "friction"),
    "photos": ("dir", "marker", "known_distance", "intrinsics", "object_only", "scale", "colour_scans",
               "camera_model"),
    "splats": ("files", "scale", "object_only"),
    "robot": ("model", "map", "logs", "holdout", "fit", "twin", "base_pose"),
}  # fmt: skip
"""Every section and key ``session.toml`` understands (``[objects.NAME]`` tables are per-object settings)."""


def _check_keys(d: dict[str, Any]) -> None:
    """Refuse a section or key that is not understood (a typo would be silently ignored), naming the nearest."""
    import difflib

    def unknown(what: str, key: str, valid: tuple[str, ...]) -> ValueError:
        near = difflib.get_close_matches(key, valid, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else f"; known: {', '.join(valid)}"
        return ValueError(f"unknown {what} {key!r}{hint}")

    for section, body in d.items():
        if section not in KNOWN_KEYS:
            raise unknown("section", f"[{section}]", tuple(f"[{k}]" for k in KNOWN_KEYS))
        if not isinstance(body, dict):
            raise ValueError(f"[{section}] must be a table, got {body!r}")
        for key, value in body.items():
            if section == "objects" and isinstance(value, dict):
                continue  # [objects.NAME]: one object's settings
            if key not in KNOWN_KEYS[section]:
                raise unknown(f"key in [{section}]", key, KNOWN_KEYS[section])
    marker = d.get("photos", {}).get("marker")
    if isinstance(marker, dict):
        for key in marker:
            if key not in ("dictionary", "id", "size"):
                raise unknown("key in photos.marker", key, ("dictionary", "id", "size"))


def _session_from_dict(root: Path, toml: Path, d: dict[str, Any]) -> Session:
    _check_keys(d)
    sess = d.get("session", {})
    lid = d.get("lidar", {})
    if "files" in lid:
        lidar = tuple(_existing(root, f, toml, "lidar file") for f in _paths(lid, "files", "lidar"))
    else:
        lidar = _files(root / "lidar", LIDAR_EXT)
    poses = lid.get("poses")
    if poses is not None:
        lidar_poses: Path | None = _existing(root, poses, toml, "lidar poses")
    else:
        lidar_poses = root / "lidar" / "poses.json" if (root / "lidar" / "poses.json").is_file() else None
    units = lid.get("units", "m")
    if units not in ("m", "cm", "mm"):
        raise ValueError(f"lidar units must be m, cm or mm, got {units!r}")
    origin = tuple(physics.number(x, "lidar.sensor_origin") for x in lid.get("sensor_origin", ()))
    if len(origin) not in (0, 3):
        raise ValueError(f"lidar.sensor_origin must be [x, y, z], got {lid['sensor_origin']!r}")
    objs = d.get("objects", {})
    object_only = _flag(objs, "object_only", False, "objects")

    ph = d.get("photos", {})
    images = _existing(root, ph["dir"], toml, "photo folder") if "dir" in ph else None
    if images is None and _files(root / "images", IMAGE_EXT):
        images = root / "images"
    marker = None
    if "marker" in ph:
        m = ph["marker"]
        marker = MarkerSpec(str(m.get("dictionary", "DICT_4X4_50")), int(m.get("id", 0)), float(m["size"]))
        if marker.size <= 0:
            raise ValueError(f"photos.marker.size must be > 0 [m], got {marker.size}")
    known = (
        _existing(root, ph["known_distance"], toml, "known-distance file") if "known_distance" in ph else None
    )
    intrinsics = None
    if "intrinsics" in ph:
        intrinsics = tuple(
            physics.positive(x, "photos.intrinsics [px]", 1e6)
            for x in _paths(ph, "intrinsics", "photos", float)
        )

    sp = d.get("splats", {})
    if "files" in sp:
        splats = tuple(_existing(root, f, toml, "splat file") for f in _paths(sp, "files", "splats"))
    else:
        splats = _files(root / "splats", (".ply",))
    density = physics.positive(objs.get("density", 500.0), "objects.density [kg/m^3]", physics.DENSITY_MAX)
    friction = physics.friction((objs.get("friction", 0.8), 0.0, 0.0), "objects.friction")[0]

    robot = None
    rb = d.get("robot", {})
    if rb:
        robot = RobotSpec(
            model=_existing(root, rb["model"], toml, "robot model"),
            map=_existing(root, rb["map"], toml, "log map"),
            logs=tuple(_existing(root, f, toml, "log") for f in _paths(rb, "logs", "robot")),
            holdout=tuple(_existing(root, f, toml, "log") for f in _paths(rb, "holdout", "robot")),
            fit=tuple(_paths(rb, "fit", "robot")),
            base_pose=tuple(float(x) for x in _paths(rb, "base_pose", "robot", float)),
        )
        robot = dataclasses.replace(robot, twin=_flag(rb, "twin", bool(robot.base_pose), "robot"))
        if len(robot.base_pose) not in (0, 2, 3, 7):
            raise ValueError(
                f"robot.base_pose must be [x, y], [x, y, yaw_deg] or a full pose, got {robot.base_pose}"
            )
        if not robot.logs:
            raise ValueError("robot.logs lists no log to fit")
    return Session(
        root=root,
        name=str(sess.get("name", root.name)),
        lidar=lidar,
        lidar_poses=lidar_poses,
        lidar_units=units,
        lidar_object_only=_flag(lid, "object_only", object_only, "lidar"),
        sensor_origin=origin,
        images=images,
        marker=marker,
        known_distance=known,
        photos_object_only=_flag(ph, "object_only", object_only, "photos"),
        photos_scale=_positive(ph, "scale", "photos"),
        colour_scans=None if "colour_scans" not in ph else _flag(ph, "colour_scans", False, "photos"),
        camera_model=None if "camera_model" not in ph else str(ph["camera_model"]),
        intrinsics=intrinsics,
        splats=splats,
        splat_scale=_positive(sp, "scale", "splats"),
        splat_object_only=_flag(sp, "object_only", object_only, "splats"),
        density=density,
        friction=friction,
        object_values=_object_values(objs),
        robot=robot,
        raw=d,
    )
