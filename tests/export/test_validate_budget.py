"""A worker with a one-thread budget validates without the second thread and gets the same checks."""

from __future__ import annotations

from real2sim.executor import thread_budget
from real2sim.export.validate import validate_package


def test_validate_on_a_one_thread_budget_gives_the_same_checks(synthetic_package, monkeypatch):
    both = validate_package(synthetic_package.path)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert thread_budget() == 1
    one = validate_package(synthetic_package.path)
    assert one == both and len(one) > 10 and all(c.passed for c in one)
