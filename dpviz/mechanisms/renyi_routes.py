"""The Rényi routes: RDP and zCDP of a composition, converted to (ε, δ) (upper bounds only).

- ``rdp``: Σ count·ρ(λ) (Steinke Lemma 31, Thm 34 when subsampled, at real orders through
  monotonicity) and the conversion of ``dpviz.rdp.conversion``;
- ``rdp_analytic``: the same with the analytic subsampling bound (``dpviz.rdp.analytic``, in the manner
  of Steinke Prop. 41 / Thm 38) in place of Thm 34's series: a comparison row for subsampled parts;
- ``zcdp``: ρ = Σ count·ρ_step with ρ_step = μ²/2 for the Gaussian (Steinke Lemma 12) or ε0²/2 for a
  pure mechanism (Prop. 16), added (Thm 13) and converted by Prop. 14 (``dpviz.composition.zcdp``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from dpviz.composition import zcdp as zcdp_method
from dpviz.guarantee import Guarantee, Kind, Solved
from dpviz.mechanisms.gaussian import Gaussian
from dpviz.mechanisms.parts import Part, checked_parts, checked_target
from dpviz.rdp.analytic import SOURCE as ANALYTIC_RDP_SOURCE
from dpviz.rdp.analytic import analytic_subsampled_rdp
from dpviz.rdp.conversion import epsilon_from_rdp, log_delta_from_rdp
from dpviz.rdp.subsampled import DEFAULT_ORDERS, REAL_ORDERS, at_real_orders, ceiling_orders

RDP_SOURCE = "RDP: Steinke Lemma 31, Thm 34 + conversion (CKS 2020 Prop. 12)"
ZCDP_SOURCE = "zCDP: Steinke Lemma 12 / Prop. 16, Thm 13"


def rdp_curve(parts: Sequence[Part], orders: tuple[float, ...] = DEFAULT_ORDERS) -> np.ndarray:
    """Σ count·ρ(λ) over the orders (Steinke Lemma 31). Mechanisms without subsampling are exact at
    real orders; a subsampled one (Thm 34, integers only) is taken at ⌈λ⌉ (Lemma 33 part 3)."""
    total = np.zeros(len(orders))
    whole = all(float(o).is_integer() for o in orders)
    for m, c in parts:
        if whole or m.sampling_rate is None:
            curve = m.rdp_curve(orders)  # type: ignore[arg-type]
        else:
            curve = at_real_orders(orders, m.rdp_curve(ceiling_orders(orders)))
        total = total + c * curve
    return total


def _rdp_answer(curve: np.ndarray, orders: tuple[float, ...], *, source: str, delta: float | None,
                epsilon: float | None, t0: float, what: str) -> Guarantee:
    """ε at δ or δ at ε from an RDP curve (the best order), or why not."""
    solved: Solved = "epsilon" if delta is not None else "delta"
    if not np.any(np.isfinite(curve)):
        return Guarantee.not_computed(source=source, delta=delta, epsilon=epsilon, solved=solved,
                                      reason="no finite Rényi divergence (mass at infinite privacy loss)")
    if delta is not None:
        if delta == 0:
            return Guarantee.not_computed(source=source, delta=0.0, reason="RDP gives no bound at δ = 0")
        eps, order = epsilon_from_rdp(orders, curve, delta=delta)
        return Guarantee(epsilon=eps, delta=delta, kind=Kind.UPPER, source=source,
                         detail=f"{what}, order {order:g}", seconds=time.perf_counter() - t0)
    assert epsilon is not None
    log_d, order = log_delta_from_rdp(orders, curve, epsilon)
    d = 1.0 if log_d >= 0 else min(1.0, math.nextafter(math.exp(log_d), math.inf))
    return Guarantee(epsilon=epsilon, delta=d, kind=Kind.UPPER, source=source, solved="delta",
                     detail=f"{what}, order {order:g}", seconds=time.perf_counter() - t0)


def rdp(parts: Sequence[Part], *, delta: float | None = None, epsilon: float | None = None) -> Guarantee:
    """RDP route (upper bound only) over ``REAL_ORDERS``."""
    t0 = time.perf_counter()
    delta, epsilon = checked_target(delta, epsilon)
    parts = checked_parts(parts)
    solved: Solved = "epsilon" if delta is not None else "delta"
    try:
        curve = rdp_curve(parts, REAL_ORDERS)
    except NotImplementedError as exc:
        return Guarantee.not_computed(source=RDP_SOURCE, delta=delta, epsilon=epsilon, solved=solved,
                                      reason=f"no RDP curve: {exc}")
    return _rdp_answer(curve, REAL_ORDERS, source=RDP_SOURCE, delta=delta, epsilon=epsilon, t0=t0,
                       what="Steinke Thm 34")


def rdp_analytic(parts: Sequence[Part], *, delta: float | None = None,
                 epsilon: float | None = None) -> Guarantee:
    """The RDP route with the analytic subsampling bound (``dpviz.rdp.analytic``) in place of Thm 34's
    series: a comparison row, only where some part is Poisson-subsampled (add/remove)."""
    t0 = time.perf_counter()
    delta, epsilon = checked_target(delta, epsilon)
    parts = checked_parts(parts)
    solved: Solved = "epsilon" if delta is not None else "delta"

    def no(reason: str) -> Guarantee:
        return Guarantee.not_computed(source=ANALYTIC_RDP_SOURCE, delta=delta, epsilon=epsilon, solved=solved,
                                      reason=reason)

    if all(m.sampling_rate is None for m, _ in parts):
        return no("no Poisson subsampling: the analytic bound is about subsampling (see the rdp route)")
    total = np.zeros(len(REAL_ORDERS))
    try:
        for m, c in parts:
            if m.sampling_rate is None:
                curve = m.rdp_curve(REAL_ORDERS)  # type: ignore[arg-type]
            elif getattr(m, "neighbouring", "add-remove") != "add-remove":
                return no("the analytic bound is for add/remove neighbours (replace-one: the rdp route)")
            else:
                base = m.base  # type: ignore[attr-defined]
                curve = np.array([analytic_subsampled_rdp(base.rdp, rate=m.sampling_rate, order=o)
                                  for o in REAL_ORDERS])
            total = total + c * curve
    except NotImplementedError as exc:
        return no(f"no RDP curve: {exc}")
    return _rdp_answer(total, REAL_ORDERS, source=ANALYTIC_RDP_SOURCE, delta=delta, epsilon=epsilon, t0=t0,
                       what="docs/MATH.md §11.5")


def zcdp_rho(parts: Sequence[Part]) -> tuple[float, str] | str:
    """(ρ, how) with ρ = Σ count·ρ_step rounded up, ρ_step = μ²/2 for an unsampled Gaussian (Steinke
    Lemma 12) or ε0²/2 with ε0 the largest loss of a pure mechanism (Prop. 16); else why not."""
    terms, how = [], []
    for m, c in parts:
        if isinstance(m, Gaussian):
            terms.append(c * (m.mu * m.mu / 2.0))
            how.append("Lemma 12")
        elif m.max_loss is not None:
            terms.append(c * (m.max_loss * m.max_loss / 2.0))
            how.append("Prop. 16")
        else:
            return (f"{m.label} is neither the Gaussian (Lemma 12) nor pure ε-DP (Prop. 16): no ρ "
                    "from the seed (its Rényi curve is the rdp route)")
    r = math.fsum(terms)
    r = r * (1.0 + 4.0 * len(terms) * 2.0**-52) if r > 0 else 0.0  # each product and the sum, up
    return r, " + ".join(dict.fromkeys(how))


def zcdp(parts: Sequence[Part], *, delta: float | None = None, epsilon: float | None = None) -> Guarantee:
    """ρ-zCDP of the composition (``zcdp_rho``, Thm 13) converted by Prop. 14 (upper bound only)."""
    t0 = time.perf_counter()
    delta, epsilon = checked_target(delta, epsilon)
    parts = checked_parts(parts)
    solved: Solved = "epsilon" if delta is not None else "delta"
    got = zcdp_rho(parts)
    if isinstance(got, str):
        return Guarantee.not_computed(source=ZCDP_SOURCE, delta=delta, epsilon=epsilon, solved=solved,
                                      reason=f"not computed: {got}")
    r, how = got
    if delta is not None:
        if delta == 0:
            return Guarantee.not_computed(source=ZCDP_SOURCE, delta=0.0,
                                          reason="zCDP gives no bound at δ = 0 (Prop. 14 needs δ > 0)")
        eps, conversion = zcdp_method.convert_epsilon(r, delta)
        return Guarantee(epsilon=eps, delta=delta, kind=Kind.UPPER,
                         source=f"zCDP: Steinke {how}, Thm 13, {conversion.split(',')[0]}",
                         detail=f"ρ = {r:.6g}; {conversion}", seconds=time.perf_counter() - t0)
    assert epsilon is not None
    d, conversion = zcdp_method.convert_delta(r, epsilon)
    return Guarantee(epsilon=epsilon, delta=d, kind=Kind.UPPER, solved="delta",
                     source=f"zCDP: Steinke {how}, Thm 13, {conversion.split(',')[0]}",
                     detail=f"ρ = {r:.6g}; {conversion}", seconds=time.perf_counter() - t0)

