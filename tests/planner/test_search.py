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


@settings(max_examples=200, deadline=None)
@given(answer=st.floats(1e-6, 1e3), start=st.floats(1e-5, 1e4), grow=st.floats(1.0, 2.0))
def test_largest_brackets_the_answer_from_any_start_and_first_step(answer: float, start: float,
                                                                    grow: float) -> None:
    """``grow`` (a hint's narrow first step) only changes where the search looks: the bracket still
    has an evaluated fitting end and an evaluated failing end, ``rtol`` apart, around the answer."""
    from dpviz.planner.search import largest

    seen: dict[float, float] = {}

    def score(x: float) -> float:
        seen[x] = x - answer
        return seen[x]

    lo, hi = largest(score, start=start, top=1e4, smallest=1e-9, rtol=1e-9, grow=grow)
    assert lo is not None and lo <= answer < hi
    assert seen[lo] <= 0 < seen[hi]
    assert hi - lo <= 1e-9 * hi
