"""The log → calibration contract: one ``Trajectory`` per logged run of a robot."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from real2sim.errors import InputError


@dataclass(frozen=True)
class Trajectory:
    """One log, already mapped to model names.

    ``time`` [s] strictly increasing, shape (N,); ``qpos`` (N, nj) [rad or m] for ``joint_names``; ``qvel``
    (N, nj) [rad/s or m/s] or None (then derived explicitly by a processing step, never silently);
    ``ctrl`` (N, na) for ``actuator_names`` (the model's actuator input, e.g. torque [N·m] for a motor);
    ``torque`` (N, nj) measured joint torque [N·m] when logged. ``object_poses`` maps a body name to (N, 7)
    pos + wxyz quaternion. ``source`` names the file it came from. ``enable`` (N, na) bool: whether each actuator
    was powered (a servo's torque-enable flag; None = always on); ``constants`` holds per-log values from the log's
    header (e.g. a servo's firmware gain ``kp``).
    """

    time: np.ndarray
    qpos: np.ndarray
    joint_names: tuple[str, ...]
    qvel: np.ndarray | None = None
    ctrl: np.ndarray | None = None
    actuator_names: tuple[str, ...] = ()
    torque: np.ndarray | None = None
    object_poses: dict[str, np.ndarray] = field(default_factory=dict)
    source: str = ""
    enable: np.ndarray | None = None
    constants: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.validate()

    @property
    def n(self) -> int:
        return int(self.time.shape[0])

    @property
    def dt(self) -> float:
        """Median sample period [s]."""
        return float(np.median(np.diff(self.time)))

    def validate(self) -> None:
        src = self.source or "trajectory"
        t = np.asarray(self.time)
        if t.ndim != 1 or t.shape[0] < 2:
            raise InputError(src, f"time must be a 1-D array of at least 2 samples, got shape {t.shape}")
        if not np.all(np.isfinite(t)):
            raise InputError(
                src, f"time has non-finite values (first at row {int(np.argmin(np.isfinite(t)))})"
            )
        bad = np.nonzero(np.diff(t) <= 0)[0]
        if bad.size:
            raise InputError(
                src,
                f"time is not strictly increasing at row {int(bad[0]) + 1} ({t[bad[0]]} -> {t[bad[0] + 1]})",
            )
        n = t.shape[0]
        for what, arr, width in (
            ("qpos", self.qpos, len(self.joint_names)),
            ("qvel", self.qvel, len(self.joint_names)),
            ("ctrl", self.ctrl, len(self.actuator_names)),
            ("torque", self.torque, len(self.joint_names)),
            ("enable", self.enable, len(self.actuator_names)),
        ):
            if arr is None:
                continue
            a = np.asarray(arr)
            if a.shape != (n, width):
                raise InputError(src, f"{what} must have shape ({n}, {width}), got {a.shape}")
            if not np.all(np.isfinite(a)):
                r, c = np.argwhere(~np.isfinite(a))[0]
                raise InputError(src, f"{what} has NaN/inf at row {int(r)}, column {int(c)}")
