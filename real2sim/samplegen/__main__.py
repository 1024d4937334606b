"""``python -m real2sim.samplegen -o sample_data [--seed 0]``: write the sample capture session."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from real2sim.errors import Real2SimError


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m real2sim.samplegen", description=__doc__)
    ap.add_argument("-o", "--out", type=Path, default=Path("sample_data"), help="output folder (replaced)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--no-robot", action="store_true", help="skip the robot model and logs")
    args = ap.parse_args(argv)

    from real2sim.samplegen.generate import SampleGenCfg, generate

    t0 = time.perf_counter()
    try:
        gt = generate(SampleGenCfg(out_dir=args.out, seed=args.seed, robot=not args.no_robot))
    except Real2SimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    n_pts = sum(s["n_points"] for s in gt["lidar"])
    print(
        f"wrote {args.out}: {len(gt['objects'])} objects, {len(gt['lidar'])} scans ({n_pts} points), "
        f"{len(gt['images'])} photos, robot: {'yes' if 'robot' in gt else 'no'} "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
