"""The planner's integer search (``dpviz.planner.search.largest_int``): the largest n whose monotone
score is ≤ 0, whatever the starting guess, and few evaluations when the guess is already at the limit
(the exact optimum's largest k once a closed form reaches 10^7: each evaluation builds ~10^5 atoms)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.planner.search import largest_int


@settings(max_examples=200, deadline=None)
@given(answer=st.integers(0, 10**7), top=st.integers(2, 10**7), start=st.integers(1, 2 * 10**7))
def test_largest_int_finds_the_last_fitting_integer(answer: int, top: int, start: int) -> None:
    calls: list[int] = []

    def score(n: int) -> float:
        calls.append(n)
        return float(n - answer) - 0.5

    lo, hi = largest_int(score, top=top, start=start)
    if answer < 1:
        assert lo is None and hi == 1
    elif answer >= top:
        assert (lo, hi) == (top, top + 1)
    else:
        assert (lo, hi) == (answer, answer + 1)
    assert all(1 <= n <= top for n in calls)


def test_guess_at_the_limit_costs_one_evaluation() -> None:
    calls: list[int] = []

    def score(n: int) -> float:
        calls.append(n)
        return -1.0  # everything fits

    assert largest_int(score, top=10_000_000, start=10_000_000) == (10_000_000, 10_000_001)
    assert calls == [10_000_000]
