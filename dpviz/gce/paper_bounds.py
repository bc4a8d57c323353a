"""HBW bounds for the uniform prior over nonzero b against 0⃗ (HBW §V-B).

Weights. Both derivations write Mix = Σ_i w_i·(term i) with a common right-hand side
Pr(V^{0⃗} ∈ S): Eq. 3-4 over |b| = j with w_j = C(k, j)/(2^k − 1); Theorem 3 over the
sets B_i (first one at position i) with w_i = 2^{k−i}/(2^k − 1), term i being one
(ε0, δ0) mechanism and (k − i) mechanisms subsampled with rate ½, i.e.
(ln(1 + (e^{ε0} − 1)/2), δ0/2)-DP each (Steinke Thm 29 / HBW ref. [29] Thm 8).

Directions (``dpviz.guarantee.DIRECTION_TEXT``). If every term is two-sided (ε_i, δ_i)-DP:
  forward  Σ w_i P_i ≤ Σ w_i (e^{ε_i} Q + δ_i):  ε_f = ln Σ w_i e^{ε_i},   δ_f = Σ w_i δ_i;
  reverse  P_i ≥ e^{−ε_i}(Q − δ_i) summed:       ε_r = −ln Σ w_i e^{−ε_i},
           δ_r = Σ w_i e^{−ε_i} δ_i / Σ w_i e^{−ε_i}.
ε_r ≤ ε_f always (Jensen); δ_r ≤ δ_f when ε_i and δ_i increase together (Chebyshev's
sum inequality), in particular for one common δ̂. HBW's statement of Thm 3 claims
(ε_f, δ_f) for both directions; with differing δ̂_i that fails (docs/MATH.md §5.4: randomized
response, ε0 = 0.5, k = 2, δ = 0.1). Here (ε_f, δ_f) is labelled ``"both"`` only when
δ_r ≤ δ_f, ``"forward"`` otherwise.

Large k. The weights halve with i, so terms i > ``TERMS`` are bounded together by the
guarantee of term ``TERMS`` (it composes more mechanisms, so it also holds for them):
sound, and within a relative 2^{−38} of the full sum.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

import numpy as np

from dpviz.composition import METHODS, optimal
from dpviz.composition.atoms import LossAtoms, deltas_at, epsilons
from dpviz.composition.levels import Level, Levels, sum_delta
from dpviz.gce.delta_split import SPLIT_MARGIN, Curve, advanced_curves, allocate, optimal_curve
from dpviz.guarantee import Guarantee, Kind
from dpviz.numerics import LN2, log1mexp, log_comb, log_pow2_minus_1, logsumexp, softplus
from dpviz.validation import ParameterError, check_count, check_delta, check_epsilon

TERMS = 40
"""Theorem 3 / Cor. 6 terms computed one by one (the rest are bounded together)."""

THEOREM3_METHODS = ("basic", "advanced", "optimal")

SOURCE_EQ34 = "HBW Eq. 3-4 (simple composition)"
SOURCE_COR6 = "HBW Cor. 6"
SOURCE_COR7 = "HBW Cor. 7"


def _source_thm3(method: str) -> str:
    return f"HBW Thm 3 with {METHODS[method].label}"


def _check(k: object, eps0: object, delta0: object) -> tuple[int, float, float]:
    return (check_count(k, field="k"), check_epsilon(eps0, field="eps0"),
            check_delta(delta0, field="delta0"))


def _check_method(method: str) -> str:
    if method not in THEOREM3_METHODS:
        raise ParameterError("method", method, "one of " + ", ".join(THEOREM3_METHODS))
    return method


def subsampled(*, eps0: float, delta0: float) -> tuple[float, float]:
    """(ε, δ) of S_½(M) for an (ε0, δ0)-DP M: (ln(1 + (e^{ε0} − 1)/2), δ0/2) (Steinke Thm 29)."""
    return math.log1p(math.expm1(eps0) / 2.0), delta0 / 2.0


def combine(log_w: np.ndarray, eps: np.ndarray, dlt: np.ndarray) -> tuple[float, float, float, float]:
    """(ε_f, δ_f, ε_r, δ_r) of a mixture against a common point mass (module docstring)."""
    eps_f = float(logsumexp(log_w + eps))
    log_z = float(logsumexp(log_w - eps))
    eps_r = -log_z
    if np.all(dlt == dlt[0]):  # common δ̂: both averages are δ̂ itself, no rounding
        return eps_f, float(dlt[0]), eps_r, float(dlt[0])
    delta_f = float(np.sum(np.exp(log_w) * dlt))
    delta_r = float(np.sum(np.exp(log_w - eps - log_z) * dlt))
    return eps_f, delta_f, eps_r, delta_r


def _directed(eps_f: float, delta_f: float, eps_r: float, delta_r: float, *, source: str,
              note: str = "") -> Guarantee:
    eps_f = max(0.0, eps_f)  # ln Σ w_i e^{ε_i} ≥ 0; rounding gave −4e-16 (raising an upper bound is sound)
    both = eps_r <= eps_f and delta_r <= delta_f
    extra = "" if both else (f"reverse direction proved only for (ε, δ) = ({eps_r:.6g}, {delta_r:.6g})")
    return Guarantee(epsilon=eps_f, delta=min(delta_f, 1.0), kind=Kind.UPPER, source=source,
                     directions="both" if both else "forward", note="; ".join(x for x in (note, extra) if x))


# ---------------------------------------------------------------- Eq. 3-4 and Cor. 7

def eq34(*, k: int, eps0: float, delta0: float) -> Guarantee:
    """HBW Eq. 3 summed as written: ε = ln[Σ_{j≥1} C(k,j) e^{jε0} / (2^k − 1)],
    δ = Σ_{j≥1} C(k,j) j δ0 / (2^k − 1); per-|b| guarantees (jε0, jδ0) by basic composition."""
    k, eps0, delta0 = _check(k, eps0, delta0)
    j = np.arange(1, k + 1, dtype=float)
    log_w = log_comb(k, j) - log_pow2_minus_1(k)
    return _directed(*combine(log_w, j * eps0, j * delta0), source=SOURCE_EQ34)


def corollary7(*, k: int, eps0: float, delta0: float) -> Guarantee:
    """HBW Cor. 7: ε = ln[((e^{ε0} + 1)^k − 1)/(2^k − 1)], δ = 2^{k−1} k δ0/(2^k − 1).

    Proved in both directions: it is Thm 3 with basic composition, whose per-term
    (ε̂_i, δ̂_i) decrease together in i (module docstring). Tight at δ = 0 (docs/MATH.md §5.5).
    """
    k, eps0, delta0 = _check(k, eps0, delta0)
    a = k * float(softplus(eps0))
    eps = max(0.0, a + float(log1mexp(-a)) - log_pow2_minus_1(k))  # ≥ 0 up to rounding: raise, never lower
    delta = k * delta0 / (2.0 * -math.expm1(-k * LN2))  # 2^{k−1} k δ0 / (2^k − 1)
    return Guarantee(epsilon=eps, delta=min(delta, 1.0), kind=Kind.UPPER, source=SOURCE_COR7)


# ---------------------------------------------------------------- Theorem 3 and Cor. 6

def _term_levels(*, k: int, i: int, eps0: float, delta0: float, with_first: bool) -> Levels:
    """Term i: (optionally) one (ε0, δ0) mechanism and (k − i) subsampled ones."""
    e_s, d_s = subsampled(eps0=eps0, delta0=delta0)
    out = []
    if with_first:
        out.append(Level(epsilon=eps0, delta=delta0, count=1))
    if k - i > 0:
        out.append(Level(epsilon=e_s, delta=d_s, count=k - i))
    return tuple(out)


@lru_cache(maxsize=8)
def _terms_levels(k: int, n: int, eps0: float, delta0: float, with_first: bool) -> tuple[Levels, ...]:
    """``_term_levels`` of terms 1..n, remembered: Thm 3 with each of its three methods, its atom sets
    and Cor. 6 ask for the same 40 terms (each ``Level`` validates its numbers when made)."""
    return tuple(_term_levels(k=k, i=i, eps0=eps0, delta0=delta0, with_first=with_first)
                 for i in range(1, n + 1))


def _term(levels: Levels, method: str, delta: float | None) -> Guarantee:
    """The CompGuarantee of one term at per-term δ̂ (``None``: basic's own Σδ)."""
    if not levels:
        return Guarantee(epsilon=0.0, delta=0.0, kind=Kind.EXACT, source="no mechanism")
    if delta is None:
        return METHODS["basic"].epsilon_for_delta(levels, delta=1.0 - 1e-300)
    if method == "optimal" and delta == 0:
        return METHODS["basic"].epsilon_for_delta(levels, delta=0.0)  # same value, no search
    if method == "optimal":  # uncached: 40 one-off terms would evict the shared atom cache
        eps = optimal.loss_atoms.__wrapped__(levels).epsilon(delta)
        if eps is None:
            return Guarantee.impossible(source=optimal.SOURCE_HETEROGENEOUS,
                                        reason=f"no ε reaches δ = {delta:g} for this term")
        return Guarantee(epsilon=eps, delta=delta, kind=Kind.EXACT, source=optimal.SOURCE_HETEROGENEOUS)
    return METHODS[method].epsilon_for_delta(levels, delta=delta)


def _optimal_terms(atoms: Sequence[LossAtoms], delta: float, *, source: str) -> list[Guarantee]:
    """Each term's optimal ε at δ̂ = ``delta`` > 0 from its loss atoms (KOV Thm 3.3), the searches
    run side by side (``atoms.epsilons``: the floats of one search at a time)."""
    return [Guarantee.impossible(source=optimal.SOURCE_HETEROGENEOUS,
                                 reason=f"no ε reaches δ = {delta:g} for this term") if eps is None
            else Guarantee(epsilon=eps, delta=delta, kind=Kind.EXACT, source=source)
            for eps in epsilons([(a, delta) for a in atoms])]


def theorem3_terms(*, k: int, eps0: float, delta0: float, method: str = "optimal",
                   deltas: Sequence[float | None]) -> list[Guarantee]:
    """(ε̂_i, δ̂_i) = CompGuarantee(M_i, S_½(M_{i+1}), …, S_½(M_k)) at δ̂_i = deltas[i−1]."""
    _check_method(method)
    return [_term(_term_levels(k=k, i=i, eps0=eps0, delta0=delta0, with_first=True), method, d)
            for i, d in zip(range(1, len(deltas) + 1), deltas, strict=True)]


def _weights(k: int, n: int) -> np.ndarray:
    """ln w_i for i = 1..n, w_i = 2^{k−i}/(2^k − 1); with n < k the last entry carries
    the whole tail Σ_{i≥n} w_i = (2^{k−n+1} − 1)/(2^k − 1)."""
    i = np.arange(1, n + 1, dtype=float)
    log_w = (k - i) * LN2 - log_pow2_minus_1(k)
    if n < k:
        m = k - n + 1
        log_w[-1] = log_pow2_minus_1(m) - log_pow2_minus_1(k)
    return log_w


def theorem3(*, k: int, eps0: float, delta0: float, method: str = "optimal",
             delta: float | None = None, split: Sequence[float] | None = None) -> Guarantee:
    """HBW Thm 3 with CompGuarantee = ``method``.

    ``delta``: one common δ̂_i = δ for every term (total δ = δ, proved both ways).
    ``split``: per-term δ̂_1..δ̂_k (total Σ w_i δ̂_i; the direction label says what holds).
    Neither (basic only): each term's own Σδ, which reproduces Cor. 7 exactly.
    """
    k, eps0, delta0 = _check(k, eps0, delta0)
    method = _check_method(method)
    source = _source_thm3(method)
    if split is not None:
        if len(split) != k:
            raise ParameterError("split", f"{len(split)} values", f"k = {k} per-term δ values")
        deltas: list[float | None] = [check_delta(d, field="split") for d in split]
        n = k
    elif delta is not None:
        delta = check_delta(delta, field="delta")
        n = min(k, TERMS)
        deltas = [delta] * n
    else:
        if method != "basic":
            raise ParameterError("delta", None, "given for Thm 3 with advanced or optimal composition")
        n = min(k, TERMS)
        deltas = [None] * n
    terms = theorem3_terms(k=k, eps0=eps0, delta0=delta0, method=method, deltas=deltas)
    bad = [t for t in terms if not t.feasible]
    if bad:
        return Guarantee.no_value(bad[0].status, source=source,
                                  reason=f"a term has no value: {bad[0].reason}")
    eps = np.array([t.epsilon for t in terms], dtype=float)
    dlt = np.array([t.delta for t in terms], dtype=float)
    if delta is not None and split is None:
        dlt[:] = delta  # common slack: each term is stated at δ̂ = δ exactly
    return _directed(*combine(_weights(k, n), eps, dlt), source=source,
                     note="common δ̂ for every term" if delta is not None and split is None else "")


def corollary6(*, k: int, eps0: float, delta0: float, method: str = "optimal", delta: float) -> Guarantee:
    """HBW Cor. 6: term i is (ε0 + ε̂_i, δ0 + δ̂_i) with (ε̂_i, δ̂_i) = CompGuarantee of the
    (k − i) subsampled mechanisms; here δ̂_i = δ − δ0 for every term (common slack)."""
    k, eps0, delta0 = _check(k, eps0, delta0)
    method = _check_method(method)
    delta = check_delta(delta, field="delta")
    source = f"{SOURCE_COR6} with {METHODS[method].label}"
    if delta < delta0:
        return Guarantee.impossible(source=source, reason=f"needs δ ≥ δ0 = {delta0:g}")
    n = min(k, TERMS)
    levels = list(_terms_levels(k, n, eps0, delta0, False))
    slack = delta - delta0
    if method == "optimal" and slack > 0:  # every term that composes something, searched side by side
        searched = iter(_optimal_terms(list(_term_atoms(k, n, eps0, delta0)[1]), slack,
                                       source=optimal.SOURCE_HETEROGENEOUS))
        terms = [next(searched) if lv else _term(lv, method, slack) for lv in levels]
    else:
        terms = [_term(lv, method, slack) for lv in levels]
    eps = np.empty(n)
    for idx, t in enumerate(terms):
        if not t.feasible:
            return Guarantee.no_value(t.status, source=source, reason=f"a term has no value: {t.reason}")
        eps[idx] = eps0 + float(t.epsilon)  # type: ignore[arg-type]
    return _directed(*combine(_weights(k, n), eps, np.full(n, delta)), source=source,
                     note="common δ̂ for every term")


# ---------------------------------------------------------------- Theorem 3 at the best split of δ

SOURCE_SPLIT = "best split of δ over the terms (docs/MATH.md §12)"


def theorem3_pair(*, k: int, eps0: float, delta0: float, method: str = "optimal",
                  delta: float) -> tuple[Guarantee, Guarantee]:
    """HBW Thm 3 at total δ: (best split of δ over the terms, one common δ̂ for every term).

    The best split minimises ε_f = ln Σ w_i e^{ε̂_i} subject to Σ w_i δ̂_i ≤ δ (convex; docs/MATH.md
    §12). Basic composition: every term needs its own Σδ, so the split is forced and the value is
    HBW Cor. 7. Optimal composition: exact, from each term's loss atoms. Advanced composition:
    over sampled slacks where its curve is convex (600 per term over 30 decades, then 300 within
    e^{±0.3} of the split found). Each term's ε̂_i is then evaluated at its δ̂_i by the method
    itself (rounded up), so the value is a sound bound whatever the split; when the common δ̂
    does at least as well, that is the split shown. Directions as ``_directed``.
    """
    k, eps0, delta0 = _check(k, eps0, delta0)
    method = _check_method(method)
    delta = check_delta(delta, field="delta")
    source = _source_thm3(method)
    n = min(k, TERMS)
    levels = list(_terms_levels(k, n, eps0, delta0, True))
    atoms = list(_term_atoms(k, n, eps0, delta0)[0]) if method == "optimal" else None
    common = _theorem3_common(k=k, n=n, levels=levels, atoms=atoms, method=method, delta=delta)
    best: Guarantee | None
    if method == "basic":
        best = _basic_split(k=k, eps0=eps0, delta0=delta0, delta=delta)
    else:
        best = _split(k=k, n=n, levels=levels, atoms=atoms, method=method, delta=delta)
    if best is None or (common.feasible and common.epsilon <= best.epsilon):  # type: ignore[operator]
        text = "the common δ̂ is the best split found" if common.feasible else ""
        best = replace(common, note="; ".join(x for x in (SOURCE_SPLIT, text) if x)) if common.feasible \
            else Guarantee.no_value(common.status, source=source, reason=f"no split of δ = {delta:g} gives "
                                    f"every term a value ({common.reason})")
    return best, common


def theorem3_best(*, k: int, eps0: float, delta0: float, method: str = "optimal", delta: float) -> Guarantee:
    """HBW Thm 3 with the best split of δ over its terms (``theorem3_pair``)."""
    return theorem3_pair(k=k, eps0=eps0, delta0=delta0, method=method, delta=delta)[0]


@lru_cache(maxsize=2)
def _term_atoms(k: int, n: int, eps0: float, delta0: float
                ) -> tuple[tuple[LossAtoms, ...], tuple[LossAtoms, ...]]:
    """The loss atoms of Thm 3's first ``n`` terms (each one (ε0, δ0) mechanism and k − i subsampled
    ones) and of Cor. 6's that compose something (the k − i subsampled ones), built together
    (``optimal.loss_atoms_many``: both share the subsampled binomials, one weight pass for all) and
    remembered for the last two (k, ε0, δ0): a change of the target δ asks for the same terms. Kept
    here, not in ``optimal.loss_atoms``'s shared cache, which 80 one-off terms would evict."""
    thm3 = list(_terms_levels(k, n, eps0, delta0, True))
    cor6 = [lv for lv in _terms_levels(k, n, eps0, delta0, False) if lv]
    atoms = optimal.loss_atoms_many(thm3 + cor6)
    return tuple(atoms[:n]), tuple(atoms[n:])


def search_terms(*, k: int, eps0: float, delta0: float, delta: float) -> None:
    """Thm 3's optimal terms at δ̂ = δ and Cor. 6's at δ − δ0, searched side by side in one run
    (``atoms.epsilons``) and remembered by the terms' atom sets (``_term_atoms``), where
    ``theorem3_pair`` and ``corollary6`` then read them: the floats of their own searches."""
    k, eps0, delta0 = _check(k, eps0, delta0)
    delta = check_delta(delta, field="delta")
    thm3, cor6 = _term_atoms(k, min(k, TERMS), eps0, delta0)
    epsilons([(a, delta) for a in thm3 if delta > 0] + [(a, delta - delta0) for a in cor6 if delta > delta0])


def _theorem3_common(*, k: int, n: int, levels: list[Levels], atoms: list[LossAtoms] | None, method: str,
                     delta: float) -> Guarantee:
    """``theorem3(delta=…)``: one δ̂ = δ for every term, sharing the terms' loss atoms."""
    source = _source_thm3(method)
    if atoms is None or delta == 0:
        terms = [_term(lv, method, delta) for lv in levels]
    else:
        terms = _optimal_terms(atoms, delta, source=source)
    bad = [t for t in terms if not t.feasible]
    if bad:
        return Guarantee.no_value(bad[0].status, source=source,
                                  reason=f"a term has no value: {bad[0].reason}")
    eps_arr = np.array([t.epsilon for t in terms], dtype=float)
    return _directed(*combine(_weights(k, n), eps_arr, np.full(n, delta)), source=source,
                     note="common δ̂ for every term")


def _basic_split(*, k: int, eps0: float, delta0: float, delta: float) -> Guarantee:
    """Basic composition states nothing below a term's own Σδ, so every split gives each term
    exactly that: Σ_i w_i δ̂_i and ln Σ_i w_i e^{ε̂_i} are HBW Cor. 7's closed forms (all k terms)."""
    c7 = corollary7(k=k, eps0=eps0, delta0=delta0)
    source = _source_thm3("basic")
    if c7.delta > delta:  # type: ignore[operator]
        return Guarantee.impossible(source=source, reason=f"basic composition needs each term's own Σδ: "
                                    f"a total δ ≥ {c7.delta:.6g} (HBW Cor. 7's δ)")
    return replace(c7, source=source, note=f"{SOURCE_SPLIT}: each term its own Σδ (= {SOURCE_COR7})")


def _split(*, k: int, n: int, levels: list[Levels], atoms: list[LossAtoms] | None, method: str,
           delta: float) -> Guarantee | None:
    """The best split for advanced or optimal composition; ``None`` when none was found."""
    log_w = _weights(k, n)
    w = np.exp(log_w)
    total = delta * (1.0 - SPLIT_MARGIN)
    tops = [delta / float(wi) for wi in w]
    many = [optimal_curve(a) for a in atoms] if atoms is not None else advanced_curves(levels, tops)
    if any(c is None for c in many):
        return None
    curves: list[Curve] = many  # type: ignore[assignment]  # none is None
    found = allocate(curves, w, total)
    if found is None:
        return None
    split, taken, inside = found
    if atoms is None:  # advanced: sampled curves, so resample around the split found (≈ 0.002 in ln δ')
        fine = advanced_curves(levels, tops, arounds=[float(s) for s in split])
        again = None if any(c is None for c in fine) else allocate(fine, w, total)  # type: ignore[arg-type]
        split = split if again is None else again[0]
    eps_list: list[float | None]
    if atoms is not None:  # a term at a vertex states that vertex's ε and its own δ(ε), rounded up
        split = np.maximum(split, [a.p_inf for a in atoms])
        at = {i: max(0.0, math.log(float(curves[i][0][taken[i]]))) for i in range(n) if i != inside}
        # their δ(ε) summed side by side: the floats of a.delta(e) one at a time
        for i, d in zip(at, deltas_at([(atoms[i], e) for i, e in at.items()]), strict=True):
            split[i] = min(d * (1.0 + atoms[i].relative_error), 1.0)
        eps_list = [at[i] if i != inside else a.epsilon(float(split[i])) for i, a in enumerate(atoms)]
    else:
        split = np.maximum(split, [sum_delta(lv) * (1.0 + 1e-12) + 1e-300 for lv in levels])
        eps_list = [METHODS[method].epsilon_for_delta(lv, delta=float(d)).epsilon
                    for lv, d in zip(levels, split, strict=True)]
    if any(e is None for e in eps_list) or math.fsum(w * split) > delta * (1.0 - SPLIT_MARGIN / 2):
        return None
    g = _directed(*combine(log_w, np.array(eps_list, dtype=float), split), source=_source_thm3(method),
                  note=SOURCE_SPLIT)
    return replace(g, delta=min(delta, g.delta * (1.0 + 1e-12)))  # type: ignore[operator]
