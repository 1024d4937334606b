"""The simulation-cost benchmark's obj2mjcf-at-our-fidelity row picks, per object, the fewest hulls still as close."""

from __future__ import annotations

import sys

from tests.helpers.bench import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from iso_fidelity import cheapest_within  # noqa: E402 (the benchmarks folder is not a package)


def test_fewest_hulls_at_least_as_close_as_ours():
    # obj2mjcf's sample-scan mug at CoACD thresholds 0.05 / 0.1 / 0.2 (bench_simcost): 192 / 30 / 8 hulls
    cands = [(0.05, [0] * 192, 2.90), (0.1, [0] * 30, 5.65), (0.2, [0] * 8, 10.03)]
    assert cheapest_within(cands, 4.9) == 0  # only the default is as close as ours
    assert cheapest_within(cands, 6.0) == 1
    assert cheapest_within(cands, 10.03) == 2  # equal counts as close
    assert cheapest_within(cands, 1.0) == 0  # none is: the finest
    assert cheapest_within([(0.05, [0] * 4, 3.0), (0.1, [0] * 4, 2.9)], 3.0) == 0  # a tie in hulls: the first
