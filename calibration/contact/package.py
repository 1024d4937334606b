"""Write a contact fit into an exported package (placeholder until the write-back lands)."""

from __future__ import annotations

from pathlib import Path


def check_package(pkg: Path) -> None:
    from real2sim.calibration.package import package_files

    package_files(pkg)


def write_contact_package(pkg: Path, report) -> list[str]:
    return [f"package {pkg.name}: contact write-back not implemented yet"]
