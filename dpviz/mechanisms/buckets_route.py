"""The privacy buckets route (Meiser-Mohammadi) for one mechanism, and its cost model.

2n + 1 buckets of ratio f; a chain of products for k ≤ 64, squaring beyond (each squaring node
coarsens f → f², Meiser-Mohammadi §5). A comparison route: at most a lower bound where squaring has
coarsened the buckets.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from dpviz.buckets import MAX_LOG_F, Buckets, epsilon_from_delta_curve
from dpviz.budget import Cost, cost_of
from dpviz.guarantee import Guarantee, Kind, Status
from dpviz.mechanisms.base import Accountable
from dpviz.mechanisms.parts import Part, checked_parts

SOURCE = "privacy buckets (Meiser-Mohammadi)"

BUCKETS_N = 50_000
"""n for the buckets comparison: 2n + 1 = 100,001 buckets."""


def buckets_cost(mech: Accountable, *, k: int, n: int = BUCKETS_N) -> Cost:
    """Estimated cost of the buckets route (``dpviz.budget`` units): the law put into 2n + 1
    buckets, then per direction a chain of k − 1 products (k ≤ 64) or ⌊log2 k⌋ squarings and
    popcount(k) − 1 products, each an FFT of 4n + 2 entries, for three arrays."""
    law = mech.law
    dirs = len(law.both_directions())
    steps = k - 1 if k <= 64 else k.bit_length() - 1 + bin(k).count("1") - 1
    size = 4 * n + 2
    cells = cost_of("bucket_cell", dirs * (2 * n + 1))
    return cells + cost_of("bucket_log", dirs * steps * size * math.log2(size), memory_units=size,
                           what=f"{2 * n + 1:,} buckets, {steps} convolutions per direction")


def buckets(parts: Sequence[Part], *, delta: float, n: int = BUCKETS_N) -> Guarantee:
    """Privacy buckets (Meiser-Mohammadi) with 2n + 1 buckets; one part only; a chain of products
    for k ≤ 64, squaring beyond."""
    t0 = time.perf_counter()
    source = SOURCE
    if len(parts) != 1:
        return Guarantee.not_computed(source=source, delta=delta, reason="one mechanism only")
    m, k = checked_parts(parts)[0]
    law = m.law
    squaring = k > 64
    lo, hi = law.support(1e-15)
    reach = max(abs(lo), abs(hi)) * (1 if squaring else k)
    unit = m.grid_unit
    log_f = max(reach / n, 1e-12)
    if unit is not None:
        log_f = unit / max(1, math.floor(unit / log_f))
    detail = f"{2 * n + 1:,} buckets, ln f={log_f:.3g}, {'squaring' if squaring else 'chain'}"
    final = log_f * 2 ** math.ceil(math.log2(k)) if squaring else log_f
    if final > MAX_LOG_F:  # the tilted masses scale with f: past e^300 their products overflow
        return Guarantee.not_computed(source=source, delta=delta, reason=(
            detail + f"; not computed: the losses reach {reach:.3g}, so the bucket factor would reach "
            f"ln f ≈ {final:.3g} > {MAX_LOG_F:g}"))
    upper = lower = 0.0
    for d in law.both_directions():
        b = Buckets.from_law(d, log_f=log_f, n=n).self_compose(k, squaring=squaring)
        if b.swamped:
            return Guarantee.not_computed(source=source, delta=delta, reason=(
                detail + "; no bounds: the FFT round-off bound of the tilted masses exceeds 1 (or ln f "
                f"would exceed {MAX_LOG_F:g}; final ln f ≈ {final:.3g})"))
        u = epsilon_from_delta_curve(b.delta_upper, delta=delta)
        lw = epsilon_from_delta_curve(b.delta_lower, delta=delta, lower=True)
        upper = math.inf if u is None else max(upper, u)
        lower = math.inf if lw is None else max(lower, lw)
    seconds = time.perf_counter() - t0
    if not math.isfinite(upper):
        # each squaring node coarsens f → f² (Meiser-Mohammadi §5): say why no upper bound is shown
        return Guarantee(epsilon=None, delta=delta, kind=Kind.INFEASIBLE, source=source,
                         status=Status.NOT_COMPUTED, lower=lower, seconds=seconds, detail=detail,
                         reason=f"no certified upper ε at this δ: the sound δ bound stays above δ "
                                f"(final ln f ≈ {final:.3g})")
    return Guarantee(epsilon=upper, delta=delta, kind=Kind.UPPER, source=source, lower=lower, upper=upper,
                     detail=detail, seconds=seconds)

