"""``CalibrateCfg``: what to calibrate and how (the options of ``real2sim calibrate``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from real2sim.errors import ConfigError, InputError
from real2sim.params import ParamSpec

Method = Literal["windows", "inverse", "inverse+windows"]
"""Trajectory matching, inverse-dynamics least squares, or the second as the warm start of the first."""
Randomize = Literal["stderr", "logs"]
"""How randomisation ranges are derived: the fit's standard errors or the spread of per-log fits."""
DelayInit = Literal["xcorr", "model"]
"""Where fitted delays start: the cross-correlation estimate or the model's value."""
ContactCone = Literal["elliptic", "model"]
"""Friction cone of a contact fit: MuJoCo's elliptic cone (isotropic Coulomb friction) or the model's own."""


@dataclass(frozen=True)
class CalibrateCfg:
    """What to calibrate and how."""

    model: Path
    """MJCF or URDF of the robot."""
    logs: tuple[Path, ...]
    """Training logs (CSV, CSV.GZ, NPZ; Parquet/MCAP/HDF5 with the formats extra)."""
    map: Path
    """TOML map from log columns to model joints/actuators."""
    fit: tuple[str, ...]
    """Parameter names to fit, e.g. joint:*.damping, delay:*; wildcards allowed."""
    out_dir: Path | None = None
    """Output folder (result.json, calibrated model, report); None: nothing written."""
    overwrite: bool = False
    """Replace the output folder even when it holds files real2sim did not write (never an input, ~ or /)."""
    holdout: tuple[Path, ...] = ()
    """Held-out logs, evaluated but never fitted."""
    specs: tuple[ParamSpec, ...] = ()
    """Explicit specs (bounds, initial, log scale) overriding the plain names in ``fit``."""
    method: Method = "windows"
    """Fit by 'windows' (trajectory matching), 'inverse' (torque least squares only) or 'inverse+windows'."""
    window_s: float = 0.5
    """Multiple-shooting window length [s]."""
    contact_window_s: float = 0.1
    """Window length [s] of the free-body (contact) fit: short enough that contact is predictable, not chaotic."""
    contact_cone: ContactCone = "elliptic"
    """Friction cone of the free-body (contact) fit, written into the calibrated model: 'elliptic' (isotropic
    Coulomb friction) or 'model' (keep the model's, e.g. MuJoCo's default pyramidal cone)."""
    max_windows: int | None = None
    """Cap on training windows (spread evenly); None: all."""
    qvel_weight: float = 0.05
    """Weight [s] of velocity errors against angle errors in the trajectory residual."""
    velocity_filter_wn: float = 0.02
    """Butterworth cutoff (× Nyquist, order 3) for velocities in inverse dynamics and when qvel is not logged."""
    smooth_qvel_wn: float | None = None
    """Smooth logged velocities with a zero-phase Butterworth at this cutoff (× Nyquist, order 3); None: off."""
    qvel_from_qpos: bool = False
    """Ignore logged velocities and derive them from qpos (Butterworth at ``smooth_qvel_wn`` or 0.1)."""
    delay_init: DelayInit = "xcorr"
    """Initial delays: 'xcorr' (cross-correlation estimate) or 'model' (0 / the spec's initial)."""
    prior_weight: float = 0.0
    """Inverse-dynamics pull towards the initial values (0: none)."""
    max_nfev: int = 40
    """Maximum residual evaluations of the trajectory fit."""
    holdout_warn_ratio: float = 3.0
    """Warn when a log's error exceeds this multiple of the training error."""
    report: bool = True
    """Write PNG/HTML plots."""
    package: Path | None = None
    """Exported package (real2sim export) to write the calibrated values into: MJCF, URDF, USD and README."""
    despike: float | None = None
    """Drop isolated position samples jumping more than this [rad or m] from both neighbours; None: off."""
    gain_constant: str | None = None
    """Scale each log's position gains by this per-log constant (e.g. firmware kp from the map's constants)."""
    gain_reference: float | None = None
    """The gain constant's value at which the model's gains hold; None: the first training log's."""
    randomize: Randomize = "stderr"
    """Randomisation ranges: 'stderr' (fit ± 2 standard errors) or 'logs' (spread of per-log fits, checked on
    held-out logs)."""
    log_models: tuple[Path, ...] = ()
    """Per-log model files (another payload or arm), one per log then per held-out log; shared values fitted jointly."""
    extra: dict = field(default_factory=dict)
    """Reserved."""

    def validate(self) -> None:
        if not self.logs:
            raise ConfigError("calibrate needs at least one --log")
        if not self.fit and not self.specs:
            raise ConfigError("calibrate needs at least one --fit parameter")
        if self.method not in get_args(Method):
            raise ConfigError(f"method must be windows, inverse or inverse+windows, got {self.method!r}")
        if self.window_s <= 0 or self.contact_window_s <= 0:
            raise ConfigError("window_s and contact_window_s must be positive")
        if self.contact_cone not in get_args(ContactCone):
            raise ConfigError(f"contact_cone must be 'elliptic' or 'model', got {self.contact_cone!r}")
        if self.delay_init not in get_args(DelayInit):
            raise ConfigError("delay_init must be 'xcorr' or 'model'")
        for name, wn in (
            ("smooth_qvel_wn", self.smooth_qvel_wn),
            ("velocity_filter_wn", self.velocity_filter_wn),
        ):
            if wn is not None and not 0.0 < wn < 1.0:
                raise ConfigError(
                    f"{name} is a Butterworth cutoff as a fraction of Nyquist: 0 < Wn < 1, got {wn}"
                )
        if self.qvel_weight < 0 or self.prior_weight < 0:
            raise ConfigError("qvel_weight and prior_weight must be >= 0")
        if self.despike is not None and not self.despike > 0:
            raise ConfigError(f"--despike is a jump size [rad or m] and must be > 0, got {self.despike:g}")
        # a dataset folder may be both: the map splits its episodes (holdout_episodes); a file is one log
        both = {Path(p).resolve() for p in self.logs if Path(p).is_file()} & {
            Path(p).resolve() for p in self.holdout
        }
        if both:
            raise ConfigError(
                f"--holdout {sorted(both)[0]} is also a training --log; a held-out log must not be fitted"
            )
        if self.max_windows is not None and self.max_windows < 1:
            raise ConfigError(f"max_windows must be >= 1, got {self.max_windows}")
        if self.log_models and len(self.log_models) != len(self.logs) + len(self.holdout):
            raise ConfigError(
                f"log_models needs one model per log and held-out log ({len(self.logs) + len(self.holdout)}), "
                f"got {len(self.log_models)}"
            )
        for p in (
            self.model,
            self.map,
            *self.logs,
            *self.holdout,
            *self.log_models,
            *([self.package] if self.package else []),
        ):
            if not Path(p).exists():
                raise InputError(p, "does not exist")
            if not (Path(p).is_file() or Path(p).is_dir()):
                raise InputError(p, "not a regular file (a FIFO, socket or device)")
