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

The headline of the routes (``best``, ``headline``) is chosen by ``dpviz.mechanisms.headline``, the
one rule every caller shares.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.special import gammaln

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost, cost_of
from dpviz.composition import optimal
from dpviz.composition import zcdp as zcdp_method
from dpviz.composition.atoms import LossAtoms, binomial_atom_count
from dpviz.composition.levels import Level, as_levels
from dpviz.guarantee import Guarantee, Kind, Solved, Status
from dpviz.mechanisms.base import Accountable
from dpviz.mechanisms.headline import LOWER_ROUTES, best, disagree, headline
from dpviz.pld import accountant
from dpviz.pld.law import LossLaw
from dpviz.rdp.analytic import SOURCE as ANALYTIC_RDP_SOURCE
from dpviz.rdp.analytic import analytic_subsampled_rdp
from dpviz.rdp.conversion import epsilon_from_rdp
from dpviz.rdp.subsampled import DEFAULT_ORDERS, REAL_ORDERS, at_real_orders, ceiling_orders
from dpviz.validation import EPSILON_MAX, ParameterError, check_count, check_delta, check_epsilon

Part = tuple[Accountable, int]
"""(mechanism, count): a registered ``Mechanism`` or a ``Subsampled`` one, and how many times."""

MAX_ATOMS = 1 << 21
"""Most atoms the exact route enumerates (per direction) before leaving it to the PLD."""

MAX_OUTCOMES = 8
"""Most distinct atoms of one step the exact route enumerates count vectors for."""

EXACT_SOURCE = "exact atoms (Steinke Prop. 7)"
PURE_SOURCE = "basic composition Σ k·ε0 (pure mechanisms)"
RDP_SOURCE = "RDP: Steinke Lemma 31, Thm 34 + conversion (CKS 2020 Prop. 12)"
ZCDP_SOURCE = "zCDP: Steinke Lemma 12 / Prop. 16, Thm 13"
GENERIC_SOURCE = "KOV Thm 3.3 for the per-step (ε0, δ0)"


def checked_parts(parts: Sequence[Part]) -> list[Part]:
    if not parts:
        raise ParameterError("mechanisms", "[]", "a non-empty list")
    out = [(m, check_count(c, field="count" if len(parts) > 1 else "k")) for m, c in parts]
    total = sum(c for _, c in out)
    if total > 10_000_000:
        raise ParameterError("count", f"{total:,} in all", "at most 10,000,000 steps in all")
    return out


def _target(delta: float | None, epsilon: float | None) -> tuple[float | None, float | None]:
    if (delta is None) == (epsilon is None):
        raise ParameterError("delta", delta, "given, or else epsilon (exactly one of the two)")
    if delta is not None:
        return check_delta(delta, field="delta"), None
    return None, check_epsilon(epsilon, field="epsilon", maximum=1e6)


# ---------------------------------------------------------------------- exact
def _compositions(n: int, k: int) -> np.ndarray:
    """All count vectors of length n with sum k (rows), as int64."""
    if n == 1:
        return np.array([[k]], dtype=np.int64)
    if n == 2:
        lead = np.arange(k + 1, dtype=np.int64)
        return np.column_stack([lead, k - lead])
    blocks = []
    for first in range(k + 1):
        rest = _compositions(n - 1, k - first)
        blocks.append(np.column_stack([np.full(rest.shape[0], first, dtype=np.int64), rest]))
    return np.concatenate(blocks)


def _n_compositions(n: int, k: int) -> int:
    return math.comb(k + n - 1, n - 1)


def _merge_lattice(total: np.ndarray, err: np.ndarray, lp: np.ndarray, index: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Atoms at the same lattice point merged: masses summed (log space), the loss the largest of
    the group's rounded-up losses (a larger loss only raises δ(ε))."""
    order = np.argsort(index, kind="stable")
    idx, up, lp = index[order], (total + err)[order], lp[order]
    starts = np.flatnonzero(np.concatenate([[True], idx[1:] != idx[:-1]]))
    return np.maximum.reduceat(up, starts), np.zeros(starts.size), np.logaddexp.reduceat(lp, starts)


def _part_atoms(law: LossLaw, k: int, pair: tuple[float, float] | None, unit: float | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(loss, loss error bound, ln P-mass, P(L = +∞)) of the k-fold law; atoms on a lattice of
    spacing ``unit`` (when every loss is a whole multiple of it) are merged per lattice point."""
    if pair is not None:
        a = LossAtoms.binomial(k=k, eps0=pair[0], delta0=pair[1])
        return a.loss, np.zeros_like(a.loss), a.log_p, a.p_inf
    keep = law.p > 0
    loss, log_p = law.loss[keep], np.log(law.p[keep])
    p_inf = -math.expm1(k * math.log1p(-law.p_inf)) if law.p_inf < 1 else 1.0
    if loss.size == 0:  # every outcome has P = 0 or Q = 0
        return np.zeros(0), np.zeros(0), np.zeros(0), p_inf
    counts = _compositions(loss.size, k)
    total = counts @ loss
    err = (loss.size + 2) * 2.0**-52 * (counts @ np.abs(loss))
    with np.errstate(invalid="ignore"):
        terms = np.where(counts > 0, counts * log_p, 0.0).sum(axis=1)
        lp = gammaln(k + 1.0) - gammaln(counts + 1.0).sum(axis=1) + terms
    if unit is not None and unit > 0:
        steps = np.rint(loss / unit)
        if np.all(np.abs(steps * unit - loss) <= 1e-9 * np.maximum(np.abs(loss), unit)):
            return (*_merge_lattice(total, err, lp, counts @ steps.astype(np.int64)), p_inf)
    return total, err, lp, p_inf


def exact_cost(parts: Sequence[Part]) -> Cost | str:
    """The exact route's estimated work for both directions it needs (``dpviz.budget``): the count
    vectors enumerated per part (atoms × outcomes), then the product of the parts' atoms sorted;
    or why the route does not apply."""
    n, cells, directions = 1, 0.0, 1 if all(m.law.symmetric for m, _ in parts) else 2
    for m, k in parts:
        law = m.law
        if law.continuous is not None:
            return f"{m.label} has a continuous loss law"
        pair = m.canonical_pair
        outcomes = max(int(np.count_nonzero(law.p > 0)), int(np.count_nonzero(law.q > 0)), 1)
        if pair is None and outcomes > MAX_OUTCOMES:
            return f"more than {MAX_OUTCOMES} outcomes per step"
        atoms = binomial_atom_count(k, pair[0]) if pair is not None else _n_compositions(outcomes, k)
        cells += atoms * (1 if pair is not None else outcomes)
        n *= atoms
        if n > MAX_ATOMS:
            return f"more than {MAX_ATOMS:,} atoms"
    what = f"{n:,} atoms"
    enumerate_ = cost_of("exact_cell", directions * cells, memory_units=cells)
    product = cost_of("product_atom", directions * n * max(1.0, math.log2(n)), memory_units=n)
    return Cost(enumerate_.seconds + product.seconds, max(enumerate_.bytes, product.bytes), what)


def exact_atoms(parts: Sequence[Part], *, reverse: bool = False) -> LossAtoms | str:
    """The composed atoms of one direction (losses rounded up by their error bound), or why not."""
    size = exact_cost(parts)
    if isinstance(size, str):
        return size
    loss = np.zeros(1)
    err = np.zeros(1)
    log_p = np.zeros(1)
    log_free = 0.0
    for m, k in parts:
        law = m.law.reversed() if reverse else m.law
        pair = m.canonical_pair
        pl, pe, pp, pinf = _part_atoms(law, k, pair, m.grid_unit)
        loss = (loss[:, None] + pl[None, :]).ravel()
        err = (err[:, None] + pe[None, :]).ravel()
        log_p = (log_p[:, None] + pp[None, :]).ravel()
        log_free += math.log1p(-pinf) if pinf < 1 else -math.inf
    up = loss + err + (len(parts) - 1) * np.abs(loss) * 2.0**-52  # one rounding per sum of parts
    p_inf = -math.expm1(log_free)
    return LossAtoms.from_masses(up, log_p, p_inf=p_inf)


def exact(parts: Sequence[Part], *, delta: float | None = None, epsilon: float | None = None,
          budget: Budget | None = None) -> Guarantee:
    """Exact composition of finite laws (module docstring); not computed beyond ``MAX_ATOMS`` or when
    its estimated cost (:func:`exact_cost`) is above ``budget`` (None: the command line's)."""
    t0 = time.perf_counter()
    delta, epsilon = _target(delta, epsilon)
    parts = checked_parts(parts)
    solved: Solved = "epsilon" if delta is not None else "delta"
    cost = exact_cost(parts)
    if isinstance(cost, Cost) and not budgets.resolve(budget).admits(cost):
        return Guarantee.not_computed(source=EXACT_SOURCE, delta=delta, epsilon=epsilon, solved=solved,
                                      reason=f"exact composition {budgets.resolve(budget).reason(cost)}")
    dirs = []
    for reverse in (False, True):
        if reverse and all(m.law.symmetric for m, _ in parts):
            break
        a = exact_atoms(parts, reverse=reverse)
        if isinstance(a, str):
            return Guarantee.not_computed(source=EXACT_SOURCE, delta=delta, epsilon=epsilon, solved=solved,
                                          reason=f"exact composition not computed: {a}")
        dirs.append(a)
    size = max(a.loss.size for a in dirs)
    if epsilon is not None:
        d = min(1.0, max(a.delta(epsilon) * (1.0 + a.relative_error) for a in dirs))
        return Guarantee(epsilon=epsilon, delta=d, kind=Kind.EXACT, source=EXACT_SOURCE, solved="delta",
                         detail=f"{size:,} atoms", seconds=time.perf_counter() - t0)
    assert delta is not None
    eps = [a.epsilon(delta) for a in dirs]
    if any(e is None for e in eps):
        return Guarantee.impossible(source=EXACT_SOURCE, delta=delta, reason=(
            f"δ = {delta:g} is below the probability of infinite privacy loss: no finite ε"))
    e = max(eps)  # type: ignore[type-var]
    return Guarantee(epsilon=e, delta=delta, kind=Kind.EXACT, source=EXACT_SOURCE, detail=f"{size:,} atoms",
                     seconds=time.perf_counter() - t0)


# ---------------------------------------------------------------------- pld
def pld(parts: Sequence[Part], *, delta: float | None = None, epsilon: float | None = None,
        h: float | None = None, budget: Budget | None = None) -> Guarantee:
    """The certified PLD interval (ENGINE's accountant); ``h`` = a width the caller chose."""
    delta, epsilon = _target(delta, epsilon)
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
    delta, epsilon = _target(delta, epsilon)
    if len(parts) != 1:
        return None
    m, k = checked_parts(parts)[0]
    return m.closed_form(k, delta=delta, epsilon=epsilon)


# ---------------------------------------------------------------------- rdp
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


def _log_delta_from_rdp(orders: Sequence[float], rho: np.ndarray, epsilon: float) -> tuple[float, float]:
    """Smallest ln δ over the orders for (λ, ρ)-RDP at ε: the conversions of ``epsilon_from_rdp``
    solved for δ (CKS 2020 Prop. 12 and Mironov Prop. 3), rounded up by a few ulps of the terms."""
    best, arg = math.inf, float(orders[0])
    for lam, r in zip(orders, rho, strict=True):
        if not np.isfinite(r):
            continue
        lf = float(lam)
        log_ratio = math.log((lf - 1) / lf)
        cks = (lf - 1) * (r - epsilon + log_ratio) - math.log(lf)
        classic = (lf - 1) * (r - epsilon)
        sizes = (lf - 1) * (abs(r) + epsilon + abs(log_ratio)) + math.log(lf)
        v = min(cks, classic) + 16.0 * 2.0**-52 * sizes
        if v < best:
            best, arg = v, lf
    return best, arg


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
    log_d, order = _log_delta_from_rdp(orders, curve, epsilon)
    d = 1.0 if log_d >= 0 else min(1.0, math.nextafter(math.exp(log_d), math.inf))
    return Guarantee(epsilon=epsilon, delta=d, kind=Kind.UPPER, source=source, solved="delta",
                     detail=f"{what}, order {order:g}", seconds=time.perf_counter() - t0)


def rdp(parts: Sequence[Part], *, delta: float | None = None, epsilon: float | None = None) -> Guarantee:
    """RDP route (upper bound only) over ``REAL_ORDERS``."""
    t0 = time.perf_counter()
    delta, epsilon = _target(delta, epsilon)
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
    delta, epsilon = _target(delta, epsilon)
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


# ---------------------------------------------------------------------- generic
def generic(parts: Sequence[Part], *, delta: float | None = None, epsilon: float | None = None) -> Guarantee:
    """KOV Thm 3.3 (the optimum over all mechanisms with the same per-step (ε0, δ0)); a
    mechanism that is not pure spends δ/(2K) per step of the K steps in all."""
    t0 = time.perf_counter()
    delta, epsilon = _target(delta, epsilon)
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
        s = m.step_guarantee(step_delta)
        if s.epsilon is None or s.delta is None or not s.epsilon <= EPSILON_MAX:
            e0 = math.inf if s.epsilon is None else s.epsilon
            return Guarantee.not_computed(source=GENERIC_SOURCE, delta=delta, epsilon=epsilon, solved=solved,
                                          reason=f"per-step ε0 = {e0:.4g} > {EPSILON_MAX:g}: not computed")
        if not s.delta < 1.0:  # e.g. replace-one by group privacy: (1 + e^ε)δ can exceed 1
            return Guarantee.not_computed(source=GENERIC_SOURCE, delta=delta, epsilon=epsilon, solved=solved,
                                          reason=f"per-step δ0 = {s.delta:.4g} ≥ 1 (no per-step guarantee): "
                                                 "not computed")
        levels.append(Level(epsilon=s.epsilon, delta=s.delta, count=c))
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
    delta, epsilon = _target(delta, epsilon)
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


# ---------------------------------------------------------------------- zcdp
def zcdp_rho(parts: Sequence[Part]) -> tuple[float, str] | str:
    """(ρ, how) with ρ = Σ count·ρ_step rounded up, ρ_step = μ²/2 for an unsampled Gaussian (Steinke
    Lemma 12) or ε0²/2 with ε0 the largest loss of a pure mechanism (Prop. 16); else why not."""
    from dpviz.mechanisms.gaussian import Gaussian

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
    delta, epsilon = _target(delta, epsilon)
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


# ---------------------------------------------------------------------- buckets
BUCKETS_N = 50_000
"""n for the buckets comparison: 2n + 1 = 100,001 buckets."""


def buckets(parts: Sequence[Part], *, delta: float, n: int = BUCKETS_N) -> Guarantee:
    """Privacy buckets (Meiser-Mohammadi) with 2n + 1 buckets; one part only; a chain of products
    for k ≤ 64, squaring beyond."""
    from dpviz.buckets import MAX_LOG_F, Buckets, epsilon_from_delta_curve

    t0 = time.perf_counter()
    source = "privacy buckets (Meiser-Mohammadi)"
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


# ---------------------------------------------------------------------- all routes, best
def routes(parts: Sequence[Part], *, delta: float | None = None, epsilon: float | None = None,
           h: float | None = None, budget: Budget | None = None,
           compare: bool = False) -> dict[str, Guarantee]:
    """Every applicable route (module docstring). Without ``compare`` the PLD runs only when the
    exact route did not answer, and buckets not at all."""
    delta, epsilon = _target(delta, epsilon)
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


__all__ = ["LOWER_ROUTES", "Part", "analytic", "best", "buckets", "disagree", "exact", "generic", "headline",
           "pld", "pure", "rdp", "rdp_analytic", "routes", "zcdp"]
