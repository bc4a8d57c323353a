"""The same question gets the same certified interval, however loaded the machine is.

The engine refines a cheap grid past the accuracy target; whether a refinement is "cheap" was
decided from the measured time of the previous grid, so a busy machine (or a first call paying
for imports) got a coarser grid and a different answer — a shared link or a planner's re-check
could disagree with itself. It is now decided from the counted-work estimate (``cost``).
"""

from __future__ import annotations

import itertools
import time

import pytest

from dpviz.mechanisms.registry import make
from dpviz.pld import accountant


@pytest.mark.parametrize(("key", "params", "k", "delta"), [
    ("laplace", {"scale": 2.0}, 20, 1e-6),
    ("gaussian", {"sigma": 1.0, "sampling_rate": 0.01}, 1000, 1e-5),
])
def test_a_slow_clock_gives_the_same_interval(monkeypatch, key, params, k, delta) -> None:
    parts = [(make(key, **params).law, k)]
    quiet = accountant.epsilon_bounds(parts, delta=delta)
    ticks = itertools.count()
    # every reading of the clock is 10 s after the last: each grid looks 10 s slow
    monkeypatch.setattr(time, "perf_counter", lambda: 10.0 * next(ticks))
    busy = accountant.epsilon_bounds(parts, delta=delta)
    assert (busy.lower, busy.upper, busy.detail) == (quiet.lower, quiet.upper, quiet.detail)
