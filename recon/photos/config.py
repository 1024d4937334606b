"""The options of the photo route (``real2sim recon photos``): structure from motion (``SfmCfg``), the CPU dense
stage (``MvsCfg``) and the route (``PhotosReconCfg``). Light (no numerical library): the CLI's options read them;
``recon.sfm``, ``recon.mvs`` and ``recon.photos`` re-export them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from real2sim.errors import ConfigError


@dataclass(frozen=True)
class SfmCfg:
    """Options of the SfM stage."""

    camera_model: str = "SIMPLE_RADIAL"
    """COLMAP camera model (SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL, OPENCV, ...)."""
    intrinsics: tuple[float, ...] | None = None
    """Known camera parameters in ``camera_model``'s order (e.g. PINHOLE: fx, fy, cx, cy [px]); kept fixed."""
    shared_intrinsics: bool | None = None
    """One camera for all images (True), one per image (False); None: one per image size and EXIF camera setting
    (make, model, focal length; an EXIF focal length is the camera's prior)."""
    matching: Literal["auto", "exhaustive", "sequential"] = "auto"
    """auto: exhaustive up to ``exhaustive_max`` images, sequential (video frames in name order) above."""
    exhaustive_max: int = 150
    """Largest set matched exhaustively under ``matching="auto"``."""
    mapper: Literal["auto", "global", "incremental"] = "auto"
    """global: global (GLOMAP) first, incremental as fallback when it fails or leaves images unregistered;
    incremental: incremental first, global when it fails or registers under half of the images; auto: incremental
    up to ``incremental_max`` images (robust on small sets with repeated texture), global above."""
    incremental_max: int = 300
    """Largest set mapped incrementally first under ``mapper="auto"``."""
    max_features: int = 2048
    """SIFT features per image."""
    max_image_size: int = 1600
    """Images are downscaled for SIFT so the longer side is at most this [px]."""
    first_octave: int | None = None
    """SIFT's first octave: 0 as is, -1 on the doubled image; None: 0, then -1 if too few keypoints."""
    min_features: int = 1500
    """Median keypoints per image below which ``first_octave=None`` re-extracts on the doubled image."""
    min_images: int = 3
    """Fewer images than this is an input error."""
    device: Literal["auto", "cpu", "cuda"] = "cpu"
    """Where SIFT runs (cuda needs a CUDA build of pycolmap)."""
    num_threads: int = 2
    """CPU threads of feature extraction and matching (mapping and bundle adjustment always run on one thread)."""
    seed: int = 0
    """Random seed for RANSAC and mapping (deterministic results)."""

    def validate(self) -> None:
        import pycolmap

        try:
            model = pycolmap.CameraModelId(getattr(pycolmap.CameraModelId, self.camera_model))
        except AttributeError:
            raise ConfigError(
                f"unknown camera model {self.camera_model!r} (COLMAP names, e.g. PINHOLE)"
            ) from None
        if self.intrinsics is not None:
            n = len(pycolmap.Camera.create_from_model_id(0, model, 1.0, 100, 100).params)
            if len(self.intrinsics) != n:
                raise ConfigError(
                    f"intrinsics for {self.camera_model} need {n} values, got {len(self.intrinsics)}"
                )
        if self.matching not in ("auto", "exhaustive", "sequential"):
            raise ConfigError(f"matching must be auto|exhaustive|sequential, got {self.matching!r}")
        if self.mapper not in ("auto", "global", "incremental"):
            raise ConfigError(f"mapper must be auto|global|incremental, got {self.mapper!r}")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ConfigError(f"device must be auto|cpu|cuda, got {self.device!r}")
        if self.device == "cuda" and not pycolmap.has_cuda:
            raise ConfigError("device 'cuda' needs a CUDA build of pycolmap (this one is CPU-only)")
        if self.min_images < 2 or self.max_features < 100 or self.num_threads < 1:
            raise ConfigError("min_images >= 2, max_features >= 100 and num_threads >= 1 are required")


@dataclass(frozen=True)
class MvsCfg:
    """Options of the dense stage."""

    min_angle_deg: float = 3.0
    """Smallest triangulation angle [deg] (median over shared sparse points) of a stereo partner."""
    max_angle_deg: float = 20.0
    """Largest triangulation angle [deg] of a stereo partner (wider pairs match poorly)."""
    max_forward_deg: float = 25.0
    """Largest angle [deg] between a pair's baseline and either image plane (forward motion rectifies badly)."""
    min_shared_points: int = 30
    """Fewest sparse points a stereo partner must share with the reference view."""
    block_size: int = 7
    """SGBM matching block side [px] (odd)."""
    uniqueness: int = 10
    """SGBM uniqueness ratio [%]: the best match must beat the second best by this margin."""
    voxel: float | None = None
    """TSDF voxel [m]; None: the footprint of 1.5 pixels at the median sparse depth."""
    trunc_voxels: float = 4.0
    """TSDF truncation distance in voxels."""
    max_views: int = 0
    """Reference views used (evenly spread); 0: all registered views."""
    min_texture: float = 1.0
    """Grey-level standard deviation in a matching block below which a pixel counts as textureless (no depth); low
    enough to keep the faint grain of a white table."""
    min_weight: float = 2.0
    """Fused points keep voxels observed by at least this many depth maps (TSDF weight)."""
    max_disparities: int = 256
    """Widest disparity search [px] (a multiple of 16)."""
    max_image_size: int = 1024
    """Images are downscaled for dense stereo so the longer side is at most this [px]; 0: full size."""

    def validate(self) -> MvsCfg:
        if not 0 < self.min_angle_deg < self.max_angle_deg < 90:
            raise ConfigError("mvs: 0 < min_angle_deg < max_angle_deg < 90 required")
        if self.block_size < 1 or self.block_size % 2 == 0:
            raise ConfigError(f"mvs: block_size must be odd and >= 1, got {self.block_size}")
        if self.voxel is not None and not self.voxel > 0:
            raise ConfigError(f"mvs: voxel must be > 0, got {self.voxel}")
        if (
            self.trunc_voxels < 1
            or self.max_views < 0
            or self.min_shared_points < 5
            or self.max_disparities % 16
            or self.max_image_size < 0
        ):
            raise ConfigError(
                "mvs: trunc_voxels >= 1, max_views >= 0, min_shared_points >= 5, max_disparities % 16 == 0, "
                "max_image_size >= 0 required"
            )
        return self


@dataclass(frozen=True)
class PhotosReconCfg:
    """Options of ``real2sim recon photos``."""

    image_dir: Path = Path()
    """Folder of overlapping photos (jpg/png/tif) of the scene."""
    out_dir: Path | None = None
    """Scene folder to write; ``None``: return the result only."""
    overwrite: bool = False
    """Replace the output folder even when it holds files real2sim did not write (never an input, ~ or /)."""
    sfm: SfmCfg = field(default_factory=SfmCfg)
    """Structure-from-motion options (camera model, known intrinsics, matching, mapper)."""
    marker_size: float | None = None
    """Side [m] of the printed marker's black square; ``None``: no marker (scale stays 1 SfM unit = 1 m)."""
    marker_dictionary: str = "DICT_4X4_50"
    """OpenCV dictionary of the marker (ArUco ``DICT_*`` or ``DICT_APRILTAG_*``)."""
    marker_id: int = 0
    """Id of the marker."""
    scale: float | None = None
    """Known metres per SfM unit (overrides the marker and a known distance)."""
    assumed_distance: float = 0.4
    """Without a scale (marker, known distance, ``scale``): the median camera-to-scene distance [m] assumed, so the
    scene stage's metric options apply; sizes are then approximate and a warning says so."""
    known_distance: Path | None = None
    """TOML file with a known distance [m] between two points marked in two or more photos each
    (``marker.load_known_distance``); overrides the marker."""
    dense: Literal["auto", "cpu", "cuda"] = "auto"
    """Dense geometry: cuda (COLMAP PatchMatch, needs a CUDA pycolmap), cpu (rectified-pair SGBM + TSDF fusion),
    or auto (cuda when available)."""
    mvs: MvsCfg = field(default_factory=MvsCfg)
    """Options of the CPU dense path."""
    splat: bool = False
    """Also write a nerfstudio dataset and train splatfacto when nerfstudio is installed."""
    poses_only: bool = False
    """Stop after SfM (cameras.json only)."""
    object_only: bool = False
    """One object, no support in view."""

    def validate(self) -> PhotosReconCfg:
        if self.marker_size is not None and not self.marker_size > 0:
            raise ConfigError(f"marker size must be > 0 m; got {self.marker_size}")
        if not self.assumed_distance > 0:
            raise ConfigError(f"assumed distance must be > 0 m; got {self.assumed_distance}")
        if self.scale is not None and not self.scale > 0:
            raise ConfigError(f"scale must be > 0; got {self.scale}")
        if self.dense not in ("auto", "cpu", "cuda"):
            raise ConfigError(f"dense must be auto|cpu|cuda; got {self.dense!r}")
        if self.dense == "cuda":
            import pycolmap

            if not pycolmap.has_cuda:
                raise ConfigError(
                    "--dense cuda needs pycolmap built with CUDA (this one is CPU-only); use --dense cpu"
                )
        self.sfm.validate()
        self.mvs.validate()
        return self
