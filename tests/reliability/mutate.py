"""A seeded mutator (bit flips, byte values, truncation, splices, header-field edits) and the fuzz loop.

``fuzz(reader, seeds, cases, seed)`` feeds ``cases`` mutants of the seed files to ``reader`` and returns what broke:
an exception outside ``Real2SimError`` or a case slower than ``HANG_S``.
"""

from __future__ import annotations

import random
import re
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from real2sim.errors import Real2SimError

HANG_S = 10.0
NUMBERS = [b"0", b"1", b"-1", b"2", b"3", b"7", b"255", b"65536", b"2147483647", b"4294967295", b"-2147483648",
           b"99999999999", b"1e308", b"nan", b"inf", b"-inf", b"0.5", b"", b"x"]  # fmt: skip
WORDS = [b"float", b"double", b"uchar", b"char", b"int", b"uint", b"list", b"vertex", b"face", b"ascii",
         b"binary_little_endian", b"binary_big_endian", b"binary", b"binary_compressed", b"F", b"U", b"I",
         b"property", b"element", b"x", b"y", b"z", b"rgb", b"rgba", b"label", b"opacity", b"nan", b"end_header",
         b"DATA", b"POINTS", b"FIELDS", b"COUNT", b"SIZE", b"TYPE", b"WIDTH", b"HEIGHT", b"time", b"<f4", b"|O",
         b"'shape':", b"True", b"(", b")", b",", b"\n", b" "]  # fmt: skip
TOKEN = re.compile(rb"[A-Za-z_0-9.+-]+")


def _header_end(data: bytes) -> int:
    """Where the text header ends (PLY ``end_header``, PCD ``DATA`` line, NPY dict, CSV first line)."""
    for mark in (b"end_header", b"DATA ", b"}"):
        i = data.find(mark)
        if 0 <= i < 4096:
            nl = data.find(b"\n", i)
            return len(data) if nl < 0 else nl + 1
    nl = data.find(b"\n")
    return min(len(data), 256) if nl < 0 else nl + 1


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to three random edits of ``data``."""
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 3))):
        op = rng.randrange(8)
        n = len(b)
        if op == 0 and n:  # bit flips
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(n)
                b[i] ^= 1 << rng.randrange(8)
        elif op == 1 and n:  # interesting byte values
            i = rng.randrange(n)
            b[i : i + 4] = rng.choice(
                (b"\x00", b"\xff", b"\x7f", b"\x80", b"\xff\xff\xff\xff", b"\x00\x00\x80\x7f")
            )
        elif op == 2:  # truncation
            del b[rng.randint(0, n) :]
        elif op == 3 and n:  # delete a range
            i = rng.randrange(n)
            del b[i : i + rng.randint(1, 64)]
        elif op == 4 and n:  # splice: copy a range elsewhere
            i, j = rng.randrange(n), rng.randrange(n)
            b[j:j] = b[i : i + rng.randint(1, 64)]
        elif op == 5:  # append junk
            b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 32)))
        else:  # header-field edits: a number or a word of the header replaced
            end = _header_end(bytes(b))
            toks = list(TOKEN.finditer(bytes(b[:end])))
            if not toks:
                continue
            t = rng.choice(toks)
            new = (
                rng.choice(NUMBERS)
                if t.group().lstrip(b"+-").replace(b".", b"").isdigit()
                else rng.choice(WORDS)
            )
            if rng.random() < 0.3:
                new = rng.choice(NUMBERS + WORDS)
            b[t.start() : t.end()] = new
    return bytes(b)


@dataclass
class FuzzResult:
    cases: int = 0
    rejected: int = 0  # Real2SimError: a one-line message for the user
    accepted: int = 0
    seconds: float = 0.0
    slowest: float = 0.0
    crashes: list[tuple[str, int, str, bytes]] = field(default_factory=list)  # seed name, case, error, input

    def summary(self) -> str:
        return (f"{self.cases} cases in {self.seconds:.1f} s: {self.rejected} rejected (Real2SimError), "
                f"{self.accepted} read, {len(self.crashes)} crashes, slowest {self.slowest * 1000:.0f} ms")  # fmt: skip


def _alarm(signum, frame):  # noqa: ARG001
    raise TimeoutError(f"hang: over {HANG_S} s")


def fuzz(reader: Callable[[Path], object], seeds: dict[str, bytes], folder: Path, cases: int, seed: int = 0,
         max_crashes: int = 50) -> FuzzResult:  # fmt: skip
    """Feed ``cases`` mutants (round-robin over ``seeds``) to ``reader`` as files in ``folder``."""
    rng = random.Random(seed)
    names = sorted(seeds)
    res = FuzzResult()
    old = signal.signal(signal.SIGALRM, _alarm)
    t_all = time.perf_counter()
    try:
        for k in range(cases):
            name = names[k % len(names)]
            data = mutate(seeds[name], rng)
            path = folder / name
            path.write_bytes(data)
            t0 = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, HANG_S)
            try:
                reader(path)
                res.accepted += 1
            except Real2SimError as exc:
                res.rejected += 1
                if "\n" in str(exc):
                    res.crashes.append((name, k, f"multi-line message: {exc!r}"[:300], data))
            except Exception as exc:  # noqa: BLE001 - any other type is a finding
                last = traceback.extract_tb(exc.__traceback__)[-1]
                where = f"{Path(last.filename).name}:{last.lineno}"
                res.crashes.append((name, k, f"{type(exc).__name__}: {exc} ({where})"[:300], data))
                if len(res.crashes) >= max_crashes:
                    break
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            res.slowest = max(res.slowest, time.perf_counter() - t0)
            res.cases += 1
    finally:
        signal.signal(signal.SIGALRM, old)
    res.seconds = time.perf_counter() - t_all
    return res
