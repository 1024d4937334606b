"""OpenBLAS kernels (``OPENBLAS_CORETYPE``) this CPU can run, and files compared byte for byte across them."""

from __future__ import annotations

import hashlib
from pathlib import Path

KERNELS = {
    "Prescott": "sse3",
    "Nehalem": "sse4_2",
    "Sandybridge": "avx",
    "Haswell": "avx2",
    "SkylakeX": "avx512f",
}
"""OpenBLAS kernels and the CPU flag each needs."""


def _flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return set(line.split(":", 1)[-1].split())


def cpu_kernels() -> list[str]:
    """The kernels of ``KERNELS`` this CPU runs, oldest first."""
    flags = _flags()
    return [k for k, need in KERNELS.items() if need in flags or (need == "sse3" and "pni" in flags)]


def two_kernels() -> list[str]:
    """Sandybridge (AVX) and Haswell (AVX2, with fused multiply-adds) where this CPU runs both, else the first two."""
    kernels = cpu_kernels()
    return [k for k in ("Sandybridge", "Haswell") if k in kernels] or kernels[:2]


def folder_digest(folder: Path) -> str:
    """SHA-256 over the relative paths and bytes of every file under ``folder``."""
    digest = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            digest.update(p.relative_to(folder).as_posix().encode() + b"\0" + p.read_bytes())
    return digest.hexdigest()
