"""Fuzz every public reader with seeded mutants of valid seed files (tests/reliability/seeds.py).

    python benchmarks/fuzz_readers.py --cases 10000 [--seed 1] [--memory-gb 4] [--out crashes/]

Counts per reader: cases, rejected with a ``Real2SimError`` (one line), read, crashes (any other exception, a
multi-line message, or a case over 10 s) and the slowest case. Exit status 1 when anything crashed; ``--out`` keeps
each crashing input as a file for a regression test. ``--memory-gb`` caps the address space so that a header lying
about its size shows up as a ``MemoryError`` instead of swapping.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def readers() -> dict:
    from real2sim.calibration import read_log
    from real2sim.recon import read_points, read_splat
    from tests.reliability import seeds

    return {"read_points": (read_points, seeds.POINTS), "read_splat": (read_splat, seeds.SPLATS),
            "read_log": (read_log, seeds.LOGS)}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=10_000, help="mutated inputs per reader")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--memory-gb", type=float, default=4.0, help="address-space cap (0: none)")
    ap.add_argument("--only", nargs="*", help="reader names (default: all)")
    ap.add_argument("--out", type=Path, help="folder for crashing inputs")
    args = ap.parse_args()
    if args.memory_gb:
        cap = int(args.memory_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    from tests.reliability import seeds
    from tests.reliability.mutate import fuzz

    results, bad = {}, 0
    for name, (reader, makers) in readers().items():
        if args.only and name not in args.only:
            continue
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            r = fuzz(reader, seeds.build(makers, args.seed), Path(d), args.cases, seed=args.seed)
            r.seconds = time.perf_counter() - t0
        print(f"{name}: {r.summary()}")
        for seed_name, case, error, data in r.crashes[:20]:
            print(f"  {seed_name} case {case}: {error}")
            if args.out:
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / f"{name}-{case}-{seed_name}").write_bytes(data)
        bad += len(r.crashes)
        results[name] = {"cases": r.cases, "rejected": r.rejected, "read": r.accepted, "crashes": len(r.crashes),
                         "seconds": round(r.seconds, 2), "slowest_ms": round(r.slowest * 1000, 1)}  # fmt: skip
    print(json.dumps(results, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
