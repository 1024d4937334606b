"""`real2sim recon splat FILE.ply -o SCENE_DIR`: a trained Gaussian splat → scene."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from real2sim.cli.inputs import check_path
from real2sim.cli.options import Opt, build, options
from real2sim.recon.splats.config import SplatReconCfg


@click.command("splat")
@click.argument("splat_file", type=click.Path(path_type=Path))
@options(
    SplatReconCfg,
    "out_dir",
    "overwrite",
    "scale",
    "object_only",
    out_dir=Opt(("-o", "--out"), required=True),
    overwrite=Opt(("--overwrite",)),
)
def command(splat_file: Path, **params: Any) -> None:
    """Reconstruct a scene from a 3DGS splat PLY (INRIA, nerfstudio or SuperSplat layout)."""
    check_path(splat_file, "file", "no such splat file", not_file="is a directory, not a splat PLY file")
    from real2sim.cli.echo import echo_summary
    from real2sim.recon.splats.run import run_recon_splat

    out = run_recon_splat(build(SplatReconCfg, params, input=splat_file))
    echo_summary(f"kept {int(out.kept.sum())}/{len(out.splat)} Gaussians; {len(out.scene.objects)} object(s); "
                 f"wrote {params['out_dir']}")  # fmt: skip
