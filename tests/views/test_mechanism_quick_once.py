"""The Mechanisms page's refinement reuses the first answer's cheap routes (issue 20: the exact
route of a subsampled finite law can take seconds, and ran twice per widget change)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dpviz.mechanisms import routes
from dpviz.views import mechanisms as mv

KIND = "randomized-response"
VALUES = mv.as_values({"categories": 3, "eps0": 0.1, "sampling": "Poisson", "sampling_rate": 0.0125,
                       "neighbouring": "add-remove"})


@pytest.fixture
def exact_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Every call of the exact route, with nothing kept from earlier tests."""
    calls: list[int] = []
    plain = routes.exact

    def counted(parts, **kw):  # type: ignore[no-untyped-def]
        calls.append(parts[0][1])
        return plain(parts, **kw)

    monkeypatch.setattr(routes, "exact", counted)
    _forget()
    yield calls
    _forget()  # the counting route's answers are not left for other tests


def _forget() -> None:
    kept = getattr(mv, "_kept_quick", None)
    if kept is not None:
        kept.cache_clear()


@pytest.mark.parametrize("target", [{"delta": 1e-5}, {"epsilon": 0.5}])
def test_refine_for_runs_the_cheap_routes_once(exact_calls: list[int], target: dict[str, float]) -> None:
    first = mv.quick_for(KIND, VALUES, k=60, **target)
    assert first["exact"].kind.name == "EXACT"
    view = mv.refine_for(KIND, VALUES, k=60, compare=False, **target)
    assert exact_calls == [60]  # the page's two calls, one exact composition
    assert view.summary["upper_route"] == "exact"


def test_a_different_target_is_computed_again(exact_calls: list[int]) -> None:
    mv.quick_for(KIND, VALUES, k=60, delta=1e-5)
    mv.refine_for(KIND, VALUES, k=60, delta=2e-5)
    assert exact_calls == [60, 60]


def test_refine_with_first_answers_as_without() -> None:
    """The same table, payload and headline as when ``refine`` computes the cheap routes itself."""
    mech = mv.make_mechanism(KIND, dict(VALUES))
    first = mv.quick(mech, k=60, delta=1e-5)
    given = mv.refine(mech, k=60, delta=1e-5, first=first)
    own = mv.refine(mech, k=60, delta=1e-5)

    def untimed(rows: list[dict[str, str]]) -> list[dict[str, str]]:
        return [{c: v for c, v in row.items() if not c.startswith("time")} for row in rows]

    assert untimed(given.tables["comparison"]) == untimed(own.tables["comparison"])
    for key in ("upper", "lower", "upper_route", "lower_route", "refined", "h"):
        assert given.summary[key] == own.summary[key], key
    assert set(first) == set(mv.quick(mech, k=60, delta=1e-5))  # refine added nothing to the caller's dict
