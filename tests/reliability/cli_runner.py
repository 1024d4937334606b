"""Run many ``real2sim`` command lines the way a user's shell does, cheaply: one process imports the stages once,
then forks one child per command line. Each child has its own working folder, its stdout and stderr captured at
the file descriptor (native libraries' output included), an address-space cap and a wall-clock limit.

``python -m tests.reliability.cli_runner SPEC.json RESULTS.json``: SPEC is a list of ``{"id", "argv", "cwd"}`` (and
optionally ``"fsize"``, the largest file the command may write, in bytes);
RESULTS a list of ``{"id", "rc", "stdout", "stderr", "seconds", "max_rss_mb"}`` (``rc`` -9 when the child was killed at the limit,
the negative signal number when it crashed).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
from pathlib import Path
from typing import Any

PRELOAD = (
    "real2sim.cli",
    "real2sim.recon.pointcloud.run",
    "real2sim.recon.photos.run",
    "real2sim.export.package",
    "real2sim.export.validate",
    "real2sim.calibration.run",
    "real2sim.pipeline.process",
    "open3d",
    "pycolmap",
    "coacd",
    "cv2",
)
"""Imported once in the parent: the address-space cap then measures what a run allocates, not the libraries it maps
(open3d alone maps some 900 MB)."""


def run_one(case: dict[str, Any], limit_s: float, memory_bytes: int) -> dict[str, Any]:
    """Fork, run ``real2sim ARGV`` in ``case["cwd"]`` under the limits, and collect what it printed."""
    cwd = Path(case["cwd"])
    out, err = cwd.parent / f".{cwd.name}.stdout", cwd.parent / f".{cwd.name}.stderr"
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: a user's shell running the command
        code = 1
        try:
            os.chdir(cwd)
            for fd, path in ((1, out), (2, err)):
                f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(f, fd)
                os.close(f)
            stdin = os.open(os.devnull, os.O_RDONLY)
            os.dup2(stdin, 0)
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
            if case.get(
                "fsize"
            ):  # a full disk, as near as a process can have one: writes past it fail (EFBIG)
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (case["fsize"], case["fsize"]))
            from real2sim.cli import main

            sys.argv = ["real2sim", *case["argv"]]
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    deadline = t0 + limit_s
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, _, usage = os.wait4(pid, 0)
            status = -1
            break
        time.sleep(0.01)
    rc = -9 if status == -1 else (os.waitstatus_to_exitcode(status))
    result = {
        "id": case["id"],
        "rc": rc,
        "stdout": out.read_text(errors="replace"),
        "stderr": err.read_text(errors="replace"),
        "seconds": time.monotonic() - t0,
        "max_rss_mb": usage.ru_maxrss
        / 1024,  # the child's peak resident memory, the preloaded pages included
    }
    out.unlink()
    err.unlink()
    return result


def main(spec: str, results: str, limit_s: float = 60.0, memory_gb: float = 2.0) -> None:
    import importlib

    for m in PRELOAD:
        try:
            importlib.import_module(m)
        except ImportError:  # an optional library: the runs that need it import it themselves
            pass
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    cases = json.loads(Path(spec).read_text())
    # the cap counts the address space the child inherits; the case may use memory_gb beyond what the parent holds
    vm = _vm_size()
    res = [run_one(c, limit_s, vm + int(memory_gb * 2**30)) for c in cases]
    Path(results).write_text(json.dumps({"parent_rss": base, "parent_vm": vm, "results": res}))


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *(float(a) for a in sys.argv[3:]))
