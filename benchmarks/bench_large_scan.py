"""Large scans: ``real2sim recon pointcloud`` on ray-cast tabletop scans of 5M-100M points (binary PLY), its wall
time and peak RSS, beside plain Open3D (``read_point_cloud`` + ``voxel_down_sample``) on the same file in the same
run. Each command runs as its own process under ``/usr/bin/time -v`` (peak RSS of the whole process).

    python benchmarks/bench_large_scan.py --points 5e6,20e6          # the issue-16 / issue-19 figures
    python benchmarks/bench_large_scan.py --points 100e6 --keep DIR  # keep the files in DIR for another run
    python benchmarks/bench_large_scan.py --quick                     # CI smoke: 300k points

The scans are ``tests/helpers/large_scan.write_tabletop_ply``: float32 x, y, z, written in blocks of rows (a
100M-point file is 1.2 GB). ``REAL2SIM_MAX_MEMORY`` (GB) sets the memory budget recon stops at with one line.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

O3D_BASELINE = (
    "import sys, open3d as o3d; pc = o3d.io.read_point_cloud(sys.argv[1]); ds = pc.voxel_down_sample(0.005); "
    "print(len(pc.points), len(ds.points))"
)


def timed(cmd: list[str], timeout: float) -> tuple[float, float, int, str]:
    """Wall seconds, peak RSS [GB], exit status and the last output line of ``cmd`` under ``/usr/bin/time -v``."""
    t = time.perf_counter()
    p = subprocess.run(
        ["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )
    wall = time.perf_counter() - t
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    rss = int(m.group(1)) / 2**20 if m else float("nan")
    out = [ln for ln in (p.stdout + p.stderr.split("\tCommand being timed")[0]).splitlines() if ln.strip()]
    return wall, rss, p.returncode, out[-1] if out else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--points", default="5e6,20e6", help="comma-separated point counts")
    ap.add_argument("--keep", type=Path, help="write / reuse the scans in this folder (not deleted)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the Open3D baseline")
    ap.add_argument("--quick", action="store_true", help="CI smoke: one 300k-point scan")
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args()
    from tests.helpers.large_scan import write_tabletop_ply

    counts = [300_000] if args.quick else [int(float(x)) for x in args.points.split(",")]
    work = Path(tempfile.mkdtemp(prefix="bench_large_"))
    folder = args.keep or work
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for n in counts:
            scan = folder / f"tabletop_{n}.ply"
            if not scan.is_file():
                t = time.perf_counter()
                got = write_tabletop_ply(scan, n)
                print(f"wrote {scan} ({got:,} points, {scan.stat().st_size / 2**30:.2f} GB) in "
                      f"{time.perf_counter() - t:.0f} s", flush=True)  # fmt: skip
            out = work / f"scene_{n}"
            cmd = [sys.executable, "-m", "real2sim", "-q", "recon", "pointcloud", str(scan), "-o", str(out),
                   "--save-point-labels"]  # fmt: skip
            wall, rss, rc, last = timed(cmd, args.timeout)
            objects = len(list((out / "meshes").glob("*"))) if rc == 0 else 0
            rows.append(
                (f"{n / 1e6:g}M", "real2sim recon", wall, rss, f"{objects} objects" if rc == 0 else last)
            )
            print(rows[-1], flush=True)
            if not args.no_baseline:
                wall, rss, rc, last = timed([sys.executable, "-c", O3D_BASELINE, str(scan)], args.timeout)
                rows.append(
                    (f"{n / 1e6:g}M", "open3d read + voxel 5 mm", wall, rss, last if rc == 0 else "failed")
                )
                print(rows[-1], flush=True)
            shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{'points':>7s}  {'what':26s} {'wall [s]':>9s} {'peak RSS [GB]':>14s}  result")
    for n, what, wall, rss, res in rows:
        print(f"{n:>7s}  {what:26s} {wall:9.1f} {rss:14.2f}  {res}")


if __name__ == "__main__":
    main()
