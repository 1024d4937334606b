"""A batch of capture sessions on 1 local worker, 2 local workers and a 2-node Ray cluster, in one run.

Each session is a copy of ``sample_data`` under its own name; each run starts from an empty decomposition cache
(``REAL2SIM_CACHE``) and an empty output folder, so every run decomposes the same meshes. Prints the wall times
(each mode ``--repeat`` times: min / median / max), the speed-up of 2 workers over 1, and whether every output file
(``run.json`` aside: it records seconds) has the same sha256 in every run.

    python benchmarks/bench_batch.py --sessions 4 --repeat 2 --ray   # the issue-16 figure
    python benchmarks/bench_batch.py --quick                          # CI smoke: 2 sessions, recon only

The Ray cluster is two nodes on this machine (``ray start --head --num-cpus 1`` and ``ray start --address ...
--num-cpus 1``), started and stopped by this script (docs/reliability.md, "Scale-out").
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make_sessions(dst: Path, n: int) -> list[Path]:
    """``n`` copies of ``sample_data`` named ``sess_0 .. sess_{n-1}``."""
    out = []
    for i in range(n):
        s = dst / f"sess_{i}"
        shutil.copytree(ROOT / "sample_data", s)
        toml = s / "session.toml"
        toml.write_text(toml.read_text().replace('name = "sample_tabletop"', f'name = "sess_{i}"'))
        out.append(s)
    return out


def tree_hashes(out: Path) -> dict[str, str]:
    """sha256 of every file under ``out`` but ``run.json`` (stage seconds), by relative path."""
    return {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != "run.json"
    }


def run_batch(
    sessions: list[Path], work: Path, tag: str, extra: list[str], stages: list[str]
) -> tuple[float, float, dict[str, str]]:
    """Wall and CPU seconds of one ``real2sim process`` of ``sessions`` from an empty cache, and its file hashes."""
    out, cache = work / f"out_{tag}", work / f"cache_{tag}"
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, REAL2SIM_CACHE=str(cache))
    cmd = [sys.executable, "-m", "real2sim", "-q", "process", *map(str, sessions), "-o", str(out), *extra]
    if stages:
        cmd += ["--stages", ",".join(stages)]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, tree_hashes(out)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RayCluster:
    """Two Ray nodes on this machine, one CPU each, started as child processes (``--block``) and stopped by pid."""

    def __init__(self, work: Path):
        port = _free_port()
        self.address = f"127.0.0.1:{port}"
        ray = str(Path(sys.executable).with_name("ray"))
        common = ["--num-cpus", "1", "--block", "--disable-usage-stats"]
        log = open(work / "ray.log", "w")  # noqa: SIM115 - closed in stop()
        self.log = log
        self.head = subprocess.Popen([ray, "start", "--head", "--port", str(port), "--include-dashboard=false",
                                      "--temp-dir", str(work / "ray")] + common, stdout=log, stderr=log)  # fmt: skip
        time.sleep(8)
        self.node = subprocess.Popen(
            [ray, "start", "--address", self.address] + common, stdout=log, stderr=log
        )
        time.sleep(8)

    def stop(self) -> None:
        for p in (self.node, self.head):
            p.terminate()
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
        self.log.close()


def export_objects(work: Path, scene: Path, repeat: int) -> bool:
    """``real2sim export SCENE --workers 1`` and ``--workers 2`` (objects in parallel), each from an empty cache;
    prints the wall times and whether the packages are byte-identical."""
    times: dict[int, list[float]] = {1: [], 2: []}
    hashes = []
    for r in range(repeat):
        for w in (1, 2):
            out, cache = work / f"pkg_{w}_{r}", work / f"pcache_{w}_{r}"
            env = dict(os.environ, REAL2SIM_CACHE=str(cache))
            cmd = [
                sys.executable,
                "-m",
                "real2sim",
                "-q",
                "export",
                str(scene),
                "-o",
                str(out),
                "--workers",
                str(w),
            ]
            t = time.perf_counter()
            subprocess.run(cmd, check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
            times[w].append(time.perf_counter() - t)
            hashes.append(tree_hashes(out))
            print(f"export objects, {w} worker(s) run {r + 1}: {times[w][-1]:.1f} s", flush=True)
    same = all(h == hashes[0] for h in hashes)
    print(f"\none scene's objects (export, empty cache): 1 worker median {statistics.median(times[1]):.1f} s, "
          f"2 workers median {statistics.median(times[2]):.1f} s; packages identical: {same}")  # fmt: skip
    return same


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=1, help="runs per mode (report min / median / max)")
    ap.add_argument("--ray", action="store_true", help="also run on a 2-node Ray cluster started here")
    ap.add_argument(
        "--objects", action="store_true", help="also export one scene's objects on 1 and 2 workers"
    )
    ap.add_argument("--quick", action="store_true", help="CI smoke: 2 sessions, recon only, once")
    args = ap.parse_args()
    n, stages = (2, ["recon"]) if args.quick else (args.sessions, [])
    work = Path(tempfile.mkdtemp(prefix="bench_batch_"))
    try:
        sessions = make_sessions(work, n)
        modes: list[tuple[str, list[str]]] = [
            ("1 worker", ["--workers", "1"]),
            ("2 workers", ["--workers", "2"]),
        ]
        times: dict[str, list[float]] = {m: [] for m, _ in modes}
        cpus: dict[str, list[float]] = {m: [] for m, _ in modes}
        hashes: dict[str, dict] = {}
        for r in range(args.repeat):
            for m, extra in modes:
                secs, cpu, h = run_batch(sessions, work, f"{m[0]}_{r}", extra, stages)
                times[m].append(secs)
                cpus[m].append(cpu)
                hashes[f"{m} #{r + 1}"] = h
                print(
                    f"{m} run {r + 1}: {secs:.1f} s wall, {cpu:.1f} s CPU, load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        if args.ray:
            os.environ["RAY_AUTH_MODE"] = (
                "disabled"  # a throw-away cluster on 127.0.0.1 (Ray 2.5x: token auth)
            )
            cluster = RayCluster(work)
            try:
                secs, cpu, h = run_batch(sessions, work, "ray", ["--ray", cluster.address], stages)
            finally:
                cluster.stop()
            times["ray 2 nodes"] = [secs]
            cpus["ray 2 nodes"] = [cpu]
            hashes["ray 2 nodes"] = h
            print(f"ray 2 nodes: {secs:.1f} s wall, load {os.getloadavg()[0]:.1f}", flush=True)
        print(f"\n{n} sessions ({'recon only' if stages else 'recon + export + calibrate'}):")
        for m, ts in times.items():
            c = statistics.median(cpus[m])
            print(f"  {m:12s} wall min {min(ts):6.1f} s  median {statistics.median(ts):6.1f} s  max {max(ts):6.1f} s"
                  f"  CPU median {c:6.1f} s")  # fmt: skip
        speed = [a / b for a, b in zip(times["1 worker"], times["2 workers"], strict=True)]
        print(f"  speed-up 2 vs 1 worker: {min(speed):.2f}x .. {max(speed):.2f}x (per repeat)")
        if args.objects:
            same_objects = export_objects(work, work / "out_1_0" / sessions[0].name / "scene", args.repeat)
        ref_name, ref = next(iter(hashes.items()))
        same = all(h == ref for h in hashes.values())
        print(f"  outputs: {len(ref)} files; identical in all {len(hashes)} runs: {same}")
        if args.objects and not same_objects:
            sys.exit(1)
        if not same:
            for k, h in hashes.items():
                diff = sorted(p for p in set(h) | set(ref) if h.get(p) != ref.get(p))
                if diff:
                    print(f"  {k} differs from {ref_name}: {diff[:5]}")
            sys.exit(1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
