"""A noise search is done once per question: the geometric mechanism's, which is also the Laplace row's
hint (``noise.HINTS``), was searched twice on the planner page (0.15 s each at Δ = 2, 390 steps), and
each search rebuilt the same count vectors for every noise it tried (``exact_route._remembered``)."""

from __future__ import annotations

import numpy as np
import pytest

from dpviz.mechanisms import exact_route
from dpviz.mechanisms.registry import MECHANISMS
from dpviz.planner import calibration, noise

ARGS = {"k": 390, "epsilon": 0.5, "delta": 1e-5, "sensitivity": 2.0}


def _counting(monkeypatch) -> list[str]:
    calls: list[str] = []
    orig = calibration.searched_noise

    def counting(mechanism, **kw):
        calls.append(mechanism)
        return orig(mechanism, **kw)

    monkeypatch.setattr(noise, "searched_noise", counting)
    return calls


def test_the_hints_source_is_searched_once_for_both_rows(monkeypatch) -> None:
    noise._source_plan.cache_clear()
    calls = _counting(monkeypatch)
    laplace = noise.smallest_noise("laplace", **ARGS)
    geometric = noise.smallest_noise("geometric", **ARGS)
    assert calls == ["geometric", "laplace"]  # the Laplace search asked for its hint first
    assert laplace.feasible and geometric.feasible
    # the remembered plan is the plan searched afresh
    fresh = noise._smallest_noise("geometric", **ARGS)
    assert fresh.value == geometric.value
    assert (fresh.check.lower, fresh.check.upper) == (geometric.check.lower, geometric.check.upper)


def test_a_hint_or_subsampling_is_searched_as_asked(monkeypatch) -> None:
    noise._source_plan.cache_clear()
    calls = _counting(monkeypatch)
    noise.smallest_noise("geometric", **ARGS)
    noise.smallest_noise("geometric", **ARGS, hint=0.0036)
    assert calls == ["geometric", "geometric"]


def test_remembered_count_vectors_are_read_only_and_the_same() -> None:
    exact_route._remembered.cache_clear()
    counts, coef = exact_route._counts(3, 390)
    assert counts.shape == (exact_route._n_compositions(3, 390), 3)
    assert np.all(counts.sum(axis=1) == 390)
    with pytest.raises(ValueError):
        counts[0, 0] = 1
    with pytest.raises(ValueError):
        coef[0] = 0.0
    again = exact_route._counts(3, 390)
    assert again[0] is counts  # kept
    law = MECHANISMS["geometric"](eps0=0.01, sensitivity=2).law
    first = exact_route._part_atoms(law, 390, None, 0.01)
    exact_route._remembered.cache_clear()
    second = exact_route._part_atoms(law, 390, None, 0.01)
    for a, b in zip(first[:3], second[:3], strict=True):
        assert np.array_equal(a, b)


def test_large_count_tables_are_not_kept() -> None:
    exact_route._remembered.cache_clear()
    n, k = 4, 200
    assert exact_route._n_compositions(n, k) > exact_route.REMEMBERED_ROWS
    counts, _coef = exact_route._counts(n, k)
    assert counts.flags.writeable and exact_route._remembered.cache_info().currsize == 0


def test_the_search_takes_the_exact_route_only_where_it_is_cheap() -> None:
    """``calibration.EXACT_SECONDS``: the geometric search at Δ = 3, 390 steps certifies by the PLD
    (the exact route's 1,171 lattice points cost 18 ms an evaluation), at Δ = 4, 50 steps by the exact
    route (201 points); the page's budget and the command line's give the same route and value."""
    from dpviz import budget as budgets
    from dpviz.planner import noise

    wide = {"k": 390, "epsilon": 0.5, "delta": 2e-5, "sensitivity": 3.0}
    page = noise.smallest_noise("geometric", **wide, budget=budgets.PAGE_SEARCH, hint=0.0025)
    cli = noise.smallest_noise("geometric", **wide, budget=budgets.CLI, hint=0.0025)
    assert dict(page.extra)["route"] == "pld" and page.value == cli.value
    narrow = noise.smallest_noise("geometric", k=50, epsilon=1.25, delta=2e-5, sensitivity=4.0, hint=0.02)
    assert dict(narrow.extra)["route"] == "exact"
