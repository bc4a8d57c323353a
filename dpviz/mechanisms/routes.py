"""Accounting routes for compositions of registered mechanisms; every route returns a ``Guarantee``.

A composition is a list of parts ``(mechanism, count)`` (one part: k steps of one mechanism;
several: a heterogeneous mix). Each route answers ε at δ (``delta=``) or δ at ε (``epsilon=``):

- ``exact``: finite laws composed atom by atom (``dpviz.composition.atoms``; the canonical
  pair by its binomial, KOV eq. 16), Steinke Prop. 7 in both directions;
- ``pld``: the certified PLD grids (``dpviz.pld.accountant.epsilon_bounds/delta_bounds``);
- ``analytic``: the Gaussian's closed form (Steinke Cor. 8/10);
- ``rdp``: Σ count·ρ(λ) (Steinke Lemma 31, Thm 34 when subsampled, at real orders through
  monotonicity) and the conversion of ``dpviz.rdp.conversion``;
- ``rdp_analytic``: the same with the analytic subsampling bound (``dpviz.rdp.analytic``, in the manner
  of Steinke Prop. 41 / Thm 38) in place of Thm 34's series: a comparison row for subsampled parts;
- ``generic``: KOV Thm 3.3 (heterogeneous optimum) for every part's per-step (ε0, δ0);
- ``pure``: Σ count·ε0 for pure mechanisms (basic composition; exact at δ = 0);
- ``zcdp``: ρ = Σ count·ρ_step with ρ_step = μ²/2 for the Gaussian (Steinke Lemma 12) or ε0²/2 for a
  pure mechanism (Prop. 16), added (Thm 13) and converted by Prop. 14 (``dpviz.composition.zcdp``);
- ``buckets``: privacy buckets (one part only, for comparison).

The exact, Rényi and buckets routes live in their own modules (``exact_route``, ``renyi_routes``,
``buckets_route``) and are named here too: ``routes.exact`` etc.

The headline of the routes (``best``, ``headline``) is chosen by ``dpviz.mechanisms.headline``, the
one rule every caller shares.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from dpviz.budget import Budget
from dpviz.composition import optimal
from dpviz.composition.levels import Level, as_levels
from dpviz.guarantee import Guarantee, Kind, Solved, Status
from dpviz.mechanisms.base import Accountable
from dpviz.mechanisms.buckets_route import BUCKETS_N, buckets, buckets_cost
from dpviz.mechanisms.exact_route import EXACT_SOURCE, MAX_ATOMS, exact, exact_atoms, exact_cost
from dpviz.mechanisms.headline import LOWER_ROUTES, best, disagree, headline
from dpviz.mechanisms.parts import Part, checked_parts, checked_target
from dpviz.mechanisms.renyi_routes import (
    RDP_SOURCE,
    ZCDP_SOURCE,
    rdp,
    rdp_analytic,
    rdp_curve,
    zcdp,
    zcdp_rho,
)
from dpviz.pld import accountant
from dpviz.validation import EPSILON_MAX, ParameterError

PURE_SOURCE = "basic composition Σ k·ε0 (pure mechanisms)"
GENERIC_SOURCE = "KOV Thm 3.3 for the per-step (ε0, δ0)"


# ---------------------------------------------------------------------- pld
def pld(parts: Sequence[Part], *, delta: float | None = None, epsilon: float | None = None,
        h: float | None = None, budget: Budget | None = None) -> Guarantee:
    """The certified PLD interval (ENGINE's accountant); ``h`` = a width the caller chose."""
    delta, epsilon = checked_target(delta, epsilon)
    parts = checked_parts(parts)
    laws = [(m.law, c) for m, c in parts]
    if delta is not None:
        g = accountant.epsilon_bounds(laws, delta=delta, h=h, budget=budget)
    else:
        g = accountant.delta_bounds(laws, epsilon=epsilon, h=h, budget=budget)  # type: ignore[arg-type]
    if h is not None and g.status is Status.NOT_COMPUTED and (g.reason or "").startswith("h must be"):
        raise ParameterError("h", h, (g.reason or "").split("must be ", 1)[1].rsplit(", got", 1)[0])
    return g


# ---------------------------------------------------------------------- analytic
def analytic(parts: Sequence[Part], *, delta: float | None = None,
             epsilon: float | None = None) -> Guarantee | None:
    """The mechanism's own closed form (one part only), e.g. the Gaussian's Steinke Cor. 8/10."""
    delta, epsilon = checked_target(delta, epsilon)
    if len(parts) != 1:
        return None
    m, k = checked_parts(parts)[0]
    return m.closed_form(k, delta=delta, epsilon=epsilon)


# ---------------------------------------------------------------------- generic
def step_level(m: Accountable, count: int, *, step_delta: float) -> Level | str:
    """``count`` steps of ``m`` at its per-step (ε0, δ0) for δ0 spent = ``step_delta`` (KOV Thm 3.3's
    input), or why there is none: ε0 above EPSILON_MAX, or δ0 ≥ 1 (replace-one by group privacy,
    (1 + e^ε)δ, can exceed 1). The generic route and the page's figures both read it."""
    s = m.step_guarantee(step_delta)
    if s.epsilon is None or s.delta is None or not s.epsilon <= EPSILON_MAX:
        e0 = math.inf if s.epsilon is None else s.epsilon
        return f"per-step ε0 = {e0:.4g} > {EPSILON_MAX:g}: not computed"
    if not s.delta < 1.0:
        return f"per-step δ0 = {s.delta:.4g} ≥ 1 (no per-step guarantee): not computed"
    return Level(epsilon=s.epsilon, delta=s.delta, count=count)


def generic(parts: Sequence[Part], *, delta: float | None = None, epsilon: float | None = None) -> Guarantee:
    """KOV Thm 3.3 (the optimum over all mechanisms with the same per-step (ε0, δ0)); a
    mechanism that is not pure spends δ/(2K) per step of the K steps in all."""
    t0 = time.perf_counter()
    delta, epsilon = checked_target(delta, epsilon)
    parts = checked_parts(parts)
    solved: Solved = "epsilon" if delta is not None else "delta"
    total = sum(c for _, c in parts)
    step_delta = (delta or 0.0) / (2.0 * total)
    levels = []
    for m, c in parts:
        if m.max_loss is None and delta is None:
            return Guarantee.not_computed(source=GENERIC_SOURCE, epsilon=epsilon, solved="delta",
                                          reason="δ at ε by generic composition needs pure mechanisms")
        if m.max_loss is None and m.canonical_pair is None and step_delta == 0:
            return Guarantee.not_computed(source=GENERIC_SOURCE, delta=delta, reason=(
                f"per-step δ0 = δ/(2k) underflows to 0 at δ = {delta:.3g}, k = {total}: not computed"))
        level = step_level(m, c, step_delta=step_delta)
        if isinstance(level, str):
            return Guarantee.not_computed(source=GENERIC_SOURCE, delta=delta, epsilon=epsilon, solved=solved,
                                          reason=level)
        levels.append(level)
    lv = as_levels(levels)
    detail = "per-step " + ", ".join(f"({x.epsilon:.4g}, {x.delta:.3g})×{x.count}" for x in lv)
    if delta is not None:
        g = optimal.epsilon_for_delta(lv, delta=delta)
        if g.status is Status.IMPOSSIBLE:
            return Guarantee.impossible(source=GENERIC_SOURCE, delta=delta, reason=g.reason or "impossible")
        if not g.feasible:
            return Guarantee.not_computed(source=GENERIC_SOURCE, delta=delta,
                                          reason=g.reason or "not computed")
        return Guarantee(epsilon=g.epsilon, delta=delta, kind=Kind.UPPER, source=GENERIC_SOURCE,
                         detail=detail, seconds=time.perf_counter() - t0)
    g = optimal.delta_for_epsilon(lv, epsilon=epsilon)  # type: ignore[arg-type]
    if not g.feasible:
        return Guarantee.not_computed(source=GENERIC_SOURCE, epsilon=epsilon, solved="delta",
                                      reason=g.reason or "not computed")
    return Guarantee(epsilon=epsilon, delta=g.delta, kind=Kind.UPPER, source=GENERIC_SOURCE, solved="delta",
                     detail=detail, seconds=time.perf_counter() - t0)


# ---------------------------------------------------------------------- pure
def largest_loss(parts: Sequence[Part]) -> float | None:
    """ε at δ = 0: the largest composed loss, max over the two directions of Σ count·max loss in that
    direction (the neighbouring direction is common to every step; ``accountant.max_loss``), rounded
    up; ``None`` when some loss is unbounded."""
    top = accountant.max_loss([(m.law, c) for m, c in parts])
    if not math.isfinite(top):
        return None
    return math.nextafter(top, math.inf) if top > 0 else 0.0


def pure(parts: Sequence[Part], *, delta: float | None = None, epsilon: float | None = None) -> Guarantee:
    """Σ count·ε0: valid at every δ ≥ 0, exact at δ = 0 (the composed loss reaches it)."""
    delta, epsilon = checked_target(delta, epsilon)
    parts = checked_parts(parts)
    top = largest_loss(parts)
    if top is None:
        if delta == 0:
            return Guarantee.impossible(source=PURE_SOURCE, delta=0.0, reason=(
                "ε at δ = 0 is infinite: the privacy loss is unbounded (a continuous tail or mass at +∞)"))
        return Guarantee.not_computed(source=PURE_SOURCE, delta=delta, epsilon=epsilon,
                                      solved="epsilon" if delta is not None else "delta",
                                      reason="not a pure mechanism: the privacy loss is unbounded")
    if delta is not None:
        return Guarantee(epsilon=top, delta=delta, kind=Kind.EXACT if delta == 0 else Kind.UPPER,
                         source=PURE_SOURCE)
    assert epsilon is not None
    if epsilon >= top:
        return Guarantee(epsilon=epsilon, delta=0.0, kind=Kind.EXACT, source=PURE_SOURCE, solved="delta")
    return Guarantee.not_computed(source=PURE_SOURCE, epsilon=epsilon, solved="delta",
                                  reason=f"Σ k·ε0 = {top:.6g} > ε: no bound on δ from it")


# ---------------------------------------------------------------------- all routes, best
def routes(parts: Sequence[Part], *, delta: float | None = None, epsilon: float | None = None,
           h: float | None = None, budget: Budget | None = None,
           compare: bool = False) -> dict[str, Guarantee]:
    """Every applicable route (module docstring). Without ``compare`` the PLD runs only when the
    exact route did not answer, and buckets not at all."""
    delta, epsilon = checked_target(delta, epsilon)
    parts = checked_parts(parts)
    out: dict[str, Guarantee] = {}
    kw: dict[str, Any] = {"delta": delta, "epsilon": epsilon}
    ex = exact(parts, budget=budget, **kw)
    if ex.status is not Status.NOT_COMPUTED or compare:
        out["exact"] = ex
    an = analytic(parts, **kw)
    if an is not None:
        out["analytic"] = an
    if compare or (ex.status is Status.NOT_COMPUTED and (an is None or h is not None)):
        out["pld"] = pld(parts, h=h, budget=budget, **kw)
    out["rdp"] = rdp(parts, **kw)
    an_rdp = rdp_analytic(parts, **kw)
    if an_rdp.status is not Status.NOT_COMPUTED or compare:
        out["rdp_analytic"] = an_rdp
    out["zcdp"] = zcdp(parts, **kw)
    out["generic"] = generic(parts, **kw)
    out["pure"] = pure(parts, **kw)
    if compare and delta is not None and delta > 0 and len(parts) == 1:
        out["buckets"] = buckets(parts, delta=delta)
    return out


__all__ = ["BUCKETS_N", "EXACT_SOURCE", "GENERIC_SOURCE", "LOWER_ROUTES", "MAX_ATOMS", "PURE_SOURCE",
           "RDP_SOURCE", "ZCDP_SOURCE", "Part", "analytic", "best", "buckets", "buckets_cost",
           "checked_parts", "disagree", "exact", "exact_atoms", "exact_cost", "generic", "headline",
           "largest_loss", "pld", "pure", "rdp", "rdp_analytic", "rdp_curve", "routes", "zcdp", "zcdp_rho"]
