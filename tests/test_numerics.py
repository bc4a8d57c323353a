"""The shared bisections (dpviz.numerics) keep a certified bracket and always stop."""

from __future__ import annotations

import math

import pytest

from dpviz.numerics import bisect_float


@pytest.mark.parametrize(("lo", "hi", "root", "scale_floor"), [
    (-800.0, -500.0, -612.345, 1.0),    # |t| > 450: one ulp of t exceeds 1e-13 · max(hi, 1)
    (-3.0, -1.0, -2.5, 0.0),            # a bracket below 0 never meets a relative tolerance
    (0.0, 5e-324, 0.0, 0.0),            # adjacent floats from the start
    (1.0, 2.0, 1.5, 0.0),               # the ordinary case still meets the tolerance
])
def test_bisect_float_stops_with_a_certified_bracket(lo: float, hi: float, root: float,
                                                     scale_floor: float) -> None:
    calls = 0

    def above(x: float) -> bool:
        nonlocal calls
        calls += 1
        if calls > 2_200:  # a float has 2^64 values: bisection needs at most ~2,100 steps
            raise AssertionError("bisection does not stop")
        return x <= root

    a, b = bisect_float(above, lo, hi, rtol=1e-13, scale_floor=scale_floor)
    assert lo <= a <= root < b <= hi or (a == lo and b == hi)
    assert b - a <= 1e-13 * max(b, scale_floor) or math.nextafter(a, math.inf) == b
