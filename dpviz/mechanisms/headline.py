"""The one headline of a composition: the routes' answers reduced to one certified bracket.

Every caller that shows "the answer" (the ``mechanism`` CLI, the Mechanisms page, the attack lab's
theory line, the planner's checks) asks :func:`headline`; :func:`best` is its (route, guarantee) form.

The rule (soundness first):
- the upper end is the smallest sound upper bound of any route (an EXACT route before an UPPER one
  at a tie);
- the lower end is the largest lower end of a route that *proves* one (``LOWER_ROUTES``, or a
  guarantee of kind EXACT or LOWER);
- a certified lower above a sound upper by more than round-off (``disagree``) is a bug in one of
  the two routes, and which one is not known here: both are left out (so the headline is the
  smallest upper that no certified lower contradicts), the note names them, and it is never EXACT;
- within round-off, the lower is clamped to the upper (the headline is never above a sound route's
  upper bound) and the answer is EXACT.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpviz.guarantee import Guarantee, Kind, Solved, Status

LOWER_ROUTES = ("exact", "analytic", "pld", "buckets")
"""Routes whose lower end is certified."""

CLAMP_RTOL = 1e-12
"""A certified lower above a sound upper by at most this (relative) is floating point: clamped."""

CLAMP_FLOOR = {"epsilon": 1.0, "delta": 0.0}
"""Scale below which ``CLAMP_RTOL`` is absolute: ε = 0 is reached through losses of size ~1 (a
loss ln(1 − q + q) = 1e-16 is round-off), δ keeps its relative tolerance down to 0."""


def disagree(lo: float, up: float, solved: Solved = "epsilon") -> bool:
    """``lo`` exceeds ``up`` by more than round-off (``CLAMP_RTOL`` relative, ``CLAMP_FLOOR``)."""
    return lo - up > CLAMP_RTOL * max(abs(up), CLAMP_FLOOR[solved])


def proves_lower(route: str, g: Guarantee) -> bool:
    """Whether ``g``'s lower end is a certified lower bound (not merely a number it carries)."""
    return (route in LOWER_ROUTES or g.kind in (Kind.EXACT, Kind.LOWER)) and \
        g.status is Status.OK and g.lower is not None


@dataclass(frozen=True)
class Headline:
    """The chosen bracket: ``guarantee`` (its ``upper`` from ``route``, its ``lower`` from
    ``lower_route``; NOT_COMPUTED or IMPOSSIBLE when no route gave an upper) and the routes that
    proved it impossible."""

    route: str
    guarantee: Guarantee
    lower_route: str | None = None
    impossible: tuple[str, ...] = ()

    @property
    def upper(self) -> float | None:
        return self.guarantee.upper if self.guarantee.status is Status.OK else None

    @property
    def lower(self) -> float | None:
        return self.guarantee.lower if self.guarantee.status is Status.OK else None

    def summary(self) -> dict[str, Any]:
        """The headline as the page and the JSON export show it."""
        g = self.guarantee
        ok = g.status is Status.OK
        return {"upper": self.upper, "upper_route": self.route if ok else None, "lower": self.lower,
                "lower_route": self.lower_route if ok and self.lower is not None else None,
                "note": g.note if ok else (g.reason if "routes disagree" in (g.reason or "") else ""),
                "impossible": list(self.impossible)}


def headline(results: dict[str, Guarantee], *, solved: Solved | None = None) -> Headline:
    """The headline of ``results`` (route → guarantee) by the module's rule; ``solved`` defaults
    to the routes' own (ε at δ, or δ at ε)."""
    first = next(iter(results.values()))
    solved = solved or first.solved
    impossible = tuple(k for k, g in results.items() if g.status is Status.IMPOSSIBLE)
    ok = {k: g for k, g in results.items() if g.status is Status.OK and g.upper is not None}
    lowers = {k: g.lower for k, g in results.items() if proves_lower(k, g)}
    if not ok:
        if impossible:
            return Headline(impossible[0], results[impossible[0]], impossible=impossible)
        reason = "; ".join(f"{k}: {g.reason}" for k, g in results.items() if g.reason)
        return Headline("none", Guarantee.not_computed(
            source="no route", reason=reason or "not computed", delta=first.delta, epsilon=first.epsilon,
            solved=first.solved))
    clash = [(a, lo, b, g.upper) for a, lo in lowers.items() for b, g in ok.items()
             if a != b and lo is not None and g.upper is not None and disagree(lo, g.upper, solved)]
    bad_lower = {a for a, *_ in clash}
    trusted = {k: g for k, g in ok.items() if k not in {b for *_, b, _ in clash}}
    note = ""
    if clash:
        note = "routes disagree: " + "; ".join(f"{a} lower {lo:.6g} > {b} upper {up:.6g}"
                                               for a, lo, b, up in clash) + " (those bounds left out)"
        if not trusted:
            none = Guarantee.not_computed(source="no route", reason=note, delta=first.delta,
                                          epsilon=first.epsilon, solved=first.solved)
            return Headline("none", none, impossible=impossible)
    key = min(trusted, key=lambda k: (trusted[k].upper or 0.0, trusted[k].kind is not Kind.EXACT,
                                      k not in LOWER_ROUTES))
    g = trusted[key]
    up = g.upper
    kept = {a: lo for a, lo in lowers.items() if a not in bad_lower and lo is not None}
    lower_route = max(kept, key=lambda a: kept[a]) if kept else None
    lo = kept[lower_route] if lower_route is not None else None
    if lo is not None and up is not None and lo > up:  # within round-off at an exact answer
        lo = up
    kind = Kind.EXACT if lo is not None and lo == up and not clash else Kind.UPPER
    fields: dict[str, Any] = {"epsilon": up, "delta": g.delta} if solved == "epsilon" else {
        "epsilon": g.epsilon, "delta": up}
    note = "; ".join(x for x in (g.note, note) if x)
    chosen = Guarantee(kind=kind, source=g.source, lower=lo, upper=up, solved=g.solved, detail=g.detail,
                       seconds=sum(r.seconds or 0.0 for r in results.values()), note=note, **fields)
    return Headline(key, chosen, lower_route=lower_route, impossible=impossible)


def best(results: dict[str, Guarantee], *, solved: Solved | None = None) -> tuple[str, Guarantee]:
    """(route of the upper end, the headline guarantee): :func:`headline` for callers that need no more."""
    h = headline(results, solved=solved)
    return h.route, h.guarantee


__all__ = ["CLAMP_FLOOR", "CLAMP_RTOL", "LOWER_ROUTES", "Headline", "best", "disagree", "headline",
           "proves_lower"]
