"""Work beside another stage: a thread whose result or error comes back to the caller, its displays silent."""

import threading

import pytest

from real2sim.errors import InputError
from real2sim.pipeline.background import Background
from real2sim.progress import _silent


def test_background_returns_the_value_from_another_thread_with_displays_silent():
    seen = {}

    def work():
        seen["thread"] = threading.current_thread() is not threading.main_thread()
        seen["silent"] = _silent.get()
        return 42

    b = Background(work)
    assert b.result() == 42 and seen == {"thread": True, "silent": True}
    assert not _silent.get()


def test_background_reraises_the_error_of_its_work():
    def work():
        raise InputError("x.csv", "bad log")

    b = Background(work)
    b.join()
    with pytest.raises(InputError, match="x.csv: bad log"):
        b.result()
