"""Every applicable bound for one GCE question, side by side (used by the CLI and the page).

Keys: ``classic`` (optimal composition of all k, no prior: KOV Thm 3.3), ``exact`` (the
exact worst case for the question), then the paper's bounds that apply. Values are
:class:`~dpviz.gce.result.GceBound` (ε at total δ ≤ the target, with directions).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpviz.composition import METHODS, homogeneous
from dpviz.gce import constraints, hypotheses, paper_bounds
from dpviz.gce.exact import SOURCE as SOURCE_EXACT
from dpviz.gce.exact import TooLargeError, exact_pair
from dpviz.gce.hypotheses import Hypothesis
from dpviz.gce.refinement import refinement_bound
from dpviz.gce.result import GceBound, infeasible
from dpviz.guarantee import Guarantee, Kind
from dpviz.validation import check_count, check_delta, check_epsilon

SOURCE_CLASSIC = "Classic composition, no prior (KOV Thm 3.3, exact)"


def _inputs(k: object, eps0: object, delta0: object, delta: object) -> tuple[int, float, float, float]:
    return (check_count(k, field="k"), check_epsilon(eps0, field="eps0"),
            check_delta(delta0, field="delta0"), check_delta(delta, field="delta"))


def classic(*, k: int, eps0: float, delta0: float, delta: float) -> GceBound:
    """Compose all k mechanisms: the answer without any knowledge about the databases."""
    g = METHODS["optimal"].epsilon_for_delta(homogeneous(k=k, eps0=eps0, delta0=delta0), delta=delta)
    return GceBound(Guarantee(epsilon=g.epsilon, delta=g.delta, kind=g.kind, source=SOURCE_CLASSIC,
                              reason=g.reason))


def exact(p0: Hypothesis, p1: Hypothesis, *, eps0: float, delta0: float, delta: float,
          fallback: dict[str, GceBound] | None = None) -> GceBound:
    """Exact two-sided ε at δ for (p0, p1); "too large" answers name the best bound instead."""
    try:
        pair = exact_pair(p0, p1, eps0=eps0, delta0=delta0)
    except TooLargeError as exc:
        return infeasible(source=SOURCE_EXACT, reason=_too_large(exc, fallback or {}))
    eps = pair.epsilon(delta)
    if eps is None:
        return infeasible(source=SOURCE_EXACT,
                          reason=f"no ε reaches δ below the infinite-loss mass {pair.delta_floor:.6g}")
    return GceBound(Guarantee(epsilon=eps, delta=pair.delta(eps), kind=Kind.EXACT, source=SOURCE_EXACT))


def _too_large(exc: TooLargeError, fallback: dict[str, GceBound]) -> str:
    best = min((b for b in fallback.values() if b.feasible), key=lambda b: b.epsilon, default=None)
    text = f"too large for the exact method ({exc.value}); "
    if best is None:
        return text + "no bound applies at this δ either"
    return text + f"best bound here: {best.source}, ε = {best.epsilon:.6g} ({best.directions})"


def uniform_nonzero(*, k: int, eps0: float, delta0: float, delta: float) -> dict[str, GceBound]:
    """0⃗ against U(B∖{0⃗}) ("in at least one database", HBW §V-B)."""
    k, eps0, delta0, delta = _inputs(k, eps0, delta0, delta)
    out: dict[str, GceBound] = {"classic": classic(k=k, eps0=eps0, delta0=delta0, delta=delta)}
    paper = {"cor7": paper_bounds.corollary7(k=k, eps0=eps0, delta0=delta0)}
    for method in paper_bounds.THEOREM3_METHODS:
        paper[f"theorem3_{method}"] = paper_bounds.theorem3(k=k, eps0=eps0, delta0=delta0, method=method,
                                                            delta=delta)
    if paper["cor7"].delta is not None and paper["cor7"].delta > delta:
        paper["cor7"] = GceBound(paper["cor7"].guarantee, paper["cor7"].directions,
                                 note=f"its δ exceeds the target δ = {delta:g}")
    fallback = {key: b for key, b in paper.items() if key != "cor7" or b.delta <= delta}  # type: ignore[operator]
    out["exact"] = exact(hypotheses.point_zero(k=k), hypotheses.uniform_nonzero(k=k), eps0=eps0,
                         delta0=delta0, delta=delta, fallback=fallback | {"classic": out["classic"]})
    return out | paper


def at_least(*, k: int, k2: int, eps0: float, delta0: float, delta: float) -> dict[str, GceBound]:
    """U{|b| < k'} against U{|b| ≥ k'} (HBW §III-A Example 2)."""
    k, eps0, delta0, delta = _inputs(k, eps0, delta0, delta)
    p0, p1 = hypotheses.below(k=k, k2=k2), hypotheses.at_least(k=k, k2=k2)
    out: dict[str, GceBound] = {"classic": classic(k=k, eps0=eps0, delta0=delta0, delta=delta)}
    if k <= 12:
        out["refinement"] = refinement_bound(p0, p1, eps0=eps0, delta0=delta0, delta=delta)
    out["exact"] = exact(p0, p1, eps0=eps0, delta0=delta0, delta=delta, fallback=dict(out))
    return out


def capped(*, k: int, cap: int, neighbouring: str, eps0: float, delta0: float,
           delta: float) -> dict[str, GceBound]:
    """At most ``cap`` databases per person (HBW §V-A Ex. 1-2); exact = optimal of d."""
    k, eps0, delta0, delta = _inputs(k, eps0, delta0, delta)
    d = constraints.compositions_for_cap(k=k, cap=cap, neighbouring=neighbouring)  # type: ignore[arg-type]
    return _constrained(d=d, k=k, eps0=eps0, delta0=delta0, delta=delta)


def allowed_set(allowed: Sequence[Sequence[int]], *, neighbouring: str, eps0: float, delta0: float,
                delta: float) -> dict[str, GceBound]:
    """An allowed set of membership vectors (HBW §V-A Ex. 3)."""
    k = len(allowed[0]) if allowed else 0
    k, eps0, delta0, delta = _inputs(k, eps0, delta0, delta)
    d = constraints.compositions_for_allowed(allowed, neighbouring=neighbouring)  # type: ignore[arg-type]
    return _constrained(d=d, k=k, eps0=eps0, delta0=delta0, delta=delta)


def _constrained(*, d: int, k: int, eps0: float, delta0: float, delta: float) -> dict[str, GceBound]:
    per = constraints.composed_bounds(d=d, eps0=eps0, delta0=delta0, delta=delta)
    return {"classic": classic(k=k, eps0=eps0, delta0=delta0, delta=delta),
            "exact": per["optimal"],
            "cap_basic": per["basic"], "cap_advanced": per["advanced"], "cap_kov": per["kov"],
            "parallel": constraints.parallel_composition(d=d, eps0=eps0, delta0=delta0)}


def epsilon_vs_k(ks: Sequence[int], *, eps0: float, delta0: float, delta: float,
                 prior: str = "uniform-nonzero") -> dict[str, np.ndarray]:
    """ε at δ against k: classic and exact for the uniform-nonzero prior (NaN where none)."""
    series: dict[str, list[float]] = {"classic": [], "exact": []}
    for k in ks:
        res = uniform_nonzero(k=int(k), eps0=eps0, delta0=delta0, delta=delta) if prior == "uniform-nonzero" \
            else {}
        for key in series:
            b = res.get(key)
            series[key].append(float(b.epsilon) if b is not None and b.feasible else np.nan)
    return {key: np.asarray(v) for key, v in series.items()}
