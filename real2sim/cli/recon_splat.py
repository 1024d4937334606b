"""`real2sim recon splat FILE.ply -o SCENE_DIR`: a trained Gaussian splat → scene."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("splat")
@click.argument("splat_file", type=click.Path(path_type=Path))
@click.option(
    "-o", "--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Scene folder to write."
)
@click.option("--scale", type=float, default=None, help="Metres per splat unit (default 1).")
@click.option("--object-only", is_flag=True, help="One object, no support in view.")
def command(splat_file: Path, out_dir: Path, scale: float | None, object_only: bool) -> None:
    """Reconstruct a scene from a 3DGS splat PLY (INRIA, nerfstudio or SuperSplat layout)."""
    from real2sim.cli import echo_summary
    from real2sim.recon.splat_recon import SplatReconCfg, run_recon_splat

    out = run_recon_splat(
        SplatReconCfg(input=splat_file, out_dir=out_dir, scale=scale, object_only=object_only)
    )
    echo_summary(f"kept {int(out.kept.sum())}/{len(out.splat)} Gaussians; {len(out.scene.objects)} object(s); "
                 f"wrote {out_dir}")  # fmt: skip
