"""The options of ``real2sim process`` (``ProcessCfg``) and ``real2sim demo`` (``DemoCfg``). Light (no numerical
library): the CLI's options read them; ``pipeline.process`` and ``pipeline.demo`` re-export them.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from real2sim.errors import ConfigError

STAGES = ("recon", "export", "calibrate", "twin")


@dataclass(frozen=True)
class ProcessCfg:
    """What ``process`` runs and where it writes."""

    session_dir: Path
    """The capture session folder (DESIGN §5)."""
    out_dir: Path
    """Output folder (scene/, package/, calibration/, run.json)."""
    overwrite: bool = False
    """Replace the output folder even when it holds files real2sim did not write (never an input, ~ or /)."""
    stages: tuple[str, ...] = STAGES
    """Stages to run, in order; a stage whose inputs the session lacks is skipped with a note (twin: only when the
    session's [robot] asks for it)."""
    workers: int = 0
    """Worker processes (0 = one per core): for the sessions of a batch, else for per-object work."""
    force: bool = False
    """Re-run stages even when their inputs and options are unchanged."""
    calibration_max_windows: int | None = None
    """Cap on multiple-shooting windows per calibration (None = all); a faster, coarser fit."""
    calibration_package: bool = False
    """Write the calibrated values into this run's package/ (its MJCF, URDF, USD and README), as calibrate --package."""

    def validate(self) -> None:
        if not self.stages:
            raise ConfigError(f"--stages is empty; give some of {', '.join(STAGES)}")
        bad = [s for s in self.stages if s not in STAGES]
        if bad:
            near = difflib.get_close_matches(bad[0], STAGES, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ConfigError(
                f"--stages: unknown stage(s) {', '.join(bad)}{hint}; stages are {', '.join(STAGES)}"
            )
        if self.workers < 0:
            raise ConfigError(f"--workers must be >= 0, got {self.workers}")


@dataclass(frozen=True)
class DemoCfg:
    out_dir: Path = Path("demo_out")
    """Where the scene, package and calibration go."""
    overwrite: bool = False
    """Replace the output folder even when it holds files real2sim did not write (never an input, ~ or /)."""
    sample_dir: Path | None = None
    """The sample session; None = ``./sample_data``, else the checkout's, else generated into the user cache."""
    workers: int = 0
    """Worker processes (0 = one per core)."""
    force: bool = True
    """Run every stage even if a previous demo left reusable results."""
