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


@settings(max_examples=200, deadline=None)
@given(answer=st.floats(1e-12, 1e3), start=st.floats(1e-5, 1e4))
def test_probe_changes_no_answer(answer: float, start: float) -> None:
    """``probe`` evaluates ``smallest`` once when ``start`` does not fit; where something fits the
    search then goes on exactly as without it (the same points, the same bracket)."""
    from dpviz.planner.search import largest

    def run(probe: bool) -> tuple[tuple[float | None, float], list[float]]:
        calls: list[float] = []

        def score(x: float) -> float:
            calls.append(x)
            return x - answer

        return largest(score, start=start, top=1e4, smallest=1e-9, rtol=1e-9, probe=probe), calls

    (plain, plain_calls), (probed, probed_calls) = run(False), run(True)
    if answer < 1e-9:  # nothing fits: both say so, the probe at the smallest x itself
        assert plain[0] is None and probed == (None, 1e-9)
        return
    assert probed == plain
    extra = [x for x in probed_calls if x == 1e-9 and x not in plain_calls]
    assert [x for x in probed_calls if x not in extra] == plain_calls
    assert len(extra) <= 1


def test_probe_ends_a_hopeless_search_in_two_evaluations() -> None:
    """Nothing fits (the planner's k·δ0 above the total δ): without the probe the search halves
    from ``start`` down to ``smallest``, 40 evaluations for a range of 10^12."""
    from dpviz.planner.search import largest

    for probe, most in ((True, 2), (False, 40)):
        calls: list[float] = []

        def score(x: float, calls: list[float] = calls) -> float:
            calls.append(x)
            return 1.0

        lo, hi = largest(score, start=1.0, top=1e3, smallest=1e-12, rtol=1e-9, probe=probe)
        assert lo is None and hi <= 2e-12
        assert (len(calls) <= most) if probe else (len(calls) >= most)
