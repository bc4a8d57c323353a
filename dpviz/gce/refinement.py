"""Composite hypotheses by tuple refinement (HBW Alg. 3, §V-B "Computing an HDP guarantee").

Alg. 3 splits the weighted tuples of p0 and p1 until they can be matched one to one
with equal weights. Each matched pair (b0, b1) only needs the mechanisms at the
indices where b0 and b1 differ (HBW §V-B), so it gets the CompGuarantee of
d = |b0 ⊕ b1| mechanisms (common δ for every pair). HBW then combine
``ε(p0, p1) = ln Σ_i w_i e^{ε_i}`` and ``δ(p0, p1) = Σ_i w_i δ_i``.

Proof status here. When one side is a point mass the right-hand side is common to
all pairs and the combination is proved in both directions (as in
:mod:`dpviz.gce.paper_bounds`). For two composite sides the summation argument
does not factor; the sound bound returned is then max_i ε_i (the argument of HBW
Thm 1's proof), and the weighted value is reported in the note for comparison
(tests compare it with the exact curve).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpviz.composition import METHODS, homogeneous
from dpviz.gce.hypotheses import Explicit, Hypothesis, to_explicit
from dpviz.guarantee import Guarantee, Kind
from dpviz.numerics import logsumexp
from dpviz.validation import ParameterError, check_delta, check_epsilon

Bits = tuple[int, ...]

_TOL = 1e-12
"""Weights below this left over after matching are floating-point residue, dropped."""

SOURCE = "HBW Alg. 3 (tuple refinement) + per-pair composition"


def refine(t0: Sequence[tuple[Bits, float]],
           t1: Sequence[tuple[Bits, float]]) -> list[tuple[Bits, Bits, float]]:
    """HBW Alg. 3 RefineTuples: matched (b0, b1, w) with Σ w = 1 and the marginals preserved."""
    rest0 = [(b, float(w)) for b, w in t0][::-1]  # stacks: take from the end
    rest1 = [(b, float(w)) for b, w in t1][::-1]
    out: list[tuple[Bits, Bits, float]] = []
    while rest0 and rest1:
        b0, w0 = rest0.pop()
        b1, w1 = rest1.pop()
        if w0 <= w1:
            out.append((b0, b1, w0))
            if w1 - w0 > _TOL:
                rest1.append((b1, w1 - w0))
        else:
            out.append((b0, b1, w1))
            if w0 - w1 > _TOL:
                rest0.append((b0, w0 - w1))
    return out


def hamming(b0: Bits, b1: Bits) -> int:
    return sum(x != y for x, y in zip(b0, b1, strict=True))


def pair_guarantee(*, d: int, eps0: float, delta0: float, delta: float, method: str) -> Guarantee:
    """CompGuarantee of the d mechanisms where the two vectors differ (HBW §V-B)."""
    if d == 0:
        return Guarantee(epsilon=0.0, delta=0.0, kind=Kind.EXACT, source="identical vectors")
    return METHODS[method].epsilon_for_delta(homogeneous(k=d, eps0=eps0, delta0=delta0), delta=delta)


def refinement_bound(p0: Hypothesis, p1: Hypothesis, *, eps0: float, delta0: float, delta: float,
                     method: str = "optimal") -> Guarantee:
    """HBW §V-B bound for (p0, p1) at total δ (common per-pair δ); see module docstring."""
    eps0 = check_epsilon(eps0, field="eps0")
    delta0 = check_delta(delta0, field="delta0")
    delta = check_delta(delta, field="delta")
    if method not in METHODS:
        raise ParameterError("method", method, "one of " + ", ".join(METHODS))
    e0, e1 = to_explicit(p0), to_explicit(p1)
    if e0.k != e1.k:
        raise ParameterError("k", f"{e0.k} vs {e1.k}", "the same k for both hypotheses")
    source = f"{SOURCE} ({METHODS[method].label})"
    matched = refine(e0.support, e1.support)
    cache: dict[int, Guarantee] = {}
    eps, weights = [], []
    for b0, b1, w in matched:
        d = hamming(b0, b1)
        if d not in cache:
            cache[d] = pair_guarantee(d=d, eps0=eps0, delta0=delta0, delta=delta, method=method)
        g = cache[d]
        if not g.feasible:
            return Guarantee.no_value(g.status, source=source, reason=f"pair at distance {d}: {g.reason}")
        eps.append(float(g.epsilon))  # type: ignore[arg-type]
        weights.append(w)
    # ln Σ w_i e^{ε_i} ≥ 0 (Σ w_i = 1, ε_i ≥ 0); rounding gave −2e-16: raising an upper bound is sound
    weighted = max(0.0, float(logsumexp(np.log(weights) + np.array(eps))))
    if _is_point(e0) or _is_point(e1):
        return Guarantee(epsilon=weighted, delta=delta, kind=Kind.UPPER, source=source,
                         directions="both", note="one side is a point mass: weighted combination")
    return Guarantee(epsilon=max(eps), delta=delta, kind=Kind.UPPER, source=source,
                     directions="both",
                     note=f"two composite hypotheses: max over pairs (HBW Thm 1 proof); "
                          f"the weighted HBW value would be ε = {weighted:.6g}")


def weighted_epsilon(p0: Explicit, p1: Explicit, *, eps0: float, delta0: float, delta: float,
                     method: str = "optimal") -> float:
    """The HBW §V-B weighted value ln Σ w_i e^{ε_i} whatever the sides (for comparisons)."""
    out = []
    for b0, b1, w in refine(p0.support, p1.support):
        g = pair_guarantee(d=hamming(b0, b1), eps0=eps0, delta0=delta0, delta=delta, method=method)
        out.append(math.log(w) + float(g.epsilon))  # type: ignore[arg-type]
    return float(logsumexp(out))


def _is_point(p: Explicit) -> bool:
    return len(p.support) == 1
