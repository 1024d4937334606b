"""`real2sim recon pointcloud|photos|splat`: captures to a ``Scene`` folder."""

from __future__ import annotations

import click

from real2sim.cli import recon_photos, recon_pointcloud, recon_splat


@click.group("recon")
def command() -> None:
    """Reconstruct a scene (support + watertight object meshes) from scans, photos or splats."""


for _mod in (recon_pointcloud, recon_photos, recon_splat):
    command.add_command(_mod.command)
