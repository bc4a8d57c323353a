"""The result protocol: what every answer of dpviz offers its tables, exports and the CLI.

Every answer says what it is (``kind``: exact, upper, lower, … in ``dpviz.guarantee.Kind``'s words),
where it comes from (``source``: a theorem or a method), whether it has a value (``status``, and
``reason`` when not), and serialises itself once (``to_json``). A numeric answer (:class:`Answer`)
adds its ``value``; an interval (:class:`Interval`) its certified ends ``lower ≤ truth ≤ upper``.

- ``dpviz.guarantee.Guarantee``: an interval (ε at δ or δ at ε, every accounting route);
- ``dpviz.planner.result.Plan``: an answer (a planned ε0, k, factor or noise) with its check;
- ``dpviz.attack.run.AttackResult`` and ``dpviz.attack.curve.Certificate``: an answer (the
  certified empirical ε, a lower bound at the stated confidence);
- ``dpviz.attack.theory.Curve``: a result without a number (a region's boundary).

Tables are built from these by one row builder (``dpviz.figures.tables.table_rows``), whose
columns also give the full-precision CSV (``table_csv``), so the display, the CSV and the JSON of
a table come from the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from dpviz.guarantee import Guarantee, Status, finite_or_none


@runtime_checkable
class Result(Protocol):
    """An answer: what it is, where it comes from, whether it has a value, and its JSON."""

    @property
    def kind(self) -> str: ...

    @property
    def source(self) -> str: ...

    @property
    def status(self) -> Status: ...

    @property
    def reason(self) -> str | None: ...

    def to_json(self) -> dict[str, Any]: ...


@runtime_checkable
class Answer(Result, Protocol):
    """A result with a number: ``value`` (None without one) and whether it has one."""

    @property
    def value(self) -> float | None: ...

    @property
    def feasible(self) -> bool: ...


@runtime_checkable
class Interval(Answer, Protocol):
    """An answer with certified ends: ``lower ≤ truth ≤ upper`` (None: that end is not known)."""

    @property
    def lower(self) -> float | None: ...

    @property
    def upper(self) -> float | None: ...

    @property
    def width(self) -> float | None: ...


def interval_json(key: str, g: Guarantee) -> dict[str, Any]:
    """One route's answer as JSON, the shape of ``python -m dpviz mechanism`` and the Mechanisms
    page's payload: the ``Guarantee``'s keys (kind, source, status, reason, epsilon, delta) and the
    interval's (lower, upper, width, method, seconds, detail; ``exact`` for the closed form, as
    earlier versions gave it; a route without a value says why under ``detail`` too)."""
    out = g.to_json()
    out.update({"lower": finite_or_none(g.lower), "upper": finite_or_none(g.upper),
                "width": finite_or_none(g.width), "method": key, "seconds": g.seconds or 0.0})
    if key == "analytic":
        out["exact"] = finite_or_none(g.upper)
    if g.reason and not g.detail:
        why = g.reason
        if g.status is Status.NOT_COMPUTED and "not computed" not in why:
            why = f"{key} not computed: {why}"
        out["detail"] = why
    return out


def results_json(results: Mapping[str, Result]) -> dict[str, dict[str, Any]]:
    """Each result's own ``to_json`` under its key (the payloads' and the CLI's tables)."""
    return {key: r.to_json() for key, r in results.items()}


def intervals_json(results: Mapping[str, Guarantee]) -> dict[str, dict[str, Any]]:
    """Each route's ``interval_json`` under its key (the CLI's and the Mechanisms page's routes)."""
    return {key: interval_json(key, g) for key, g in results.items()}
