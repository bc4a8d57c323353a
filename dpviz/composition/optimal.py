"""Exact optimal composition (KOV Thm 3.3 and its heterogeneous extension).

Every (ε0, δ0)-DP mechanism is a post-processing of the canonical pair (KOV eq. 16),
so the hockey-stick curve of the k-fold product of canonical pairs is the exact
worst case over all k-fold (adaptive) compositions. Its privacy loss has finitely
many atoms (``LossAtoms``): binomial for one level, a product of binomials for a
few distinct levels (exact; the general problem is #P-hard, Murtagh-Vadhan).

``δ_opt(ε) = 1 − Π(1−δ_i) (1 − Σ_l C(k,l) max(0, e^{(k−l)ε0} − e^{ε+lε0}) / (1+e^{ε0})^k)``

Cost. Each binomial keeps ≈ 40√k atoms (negligible tails lumped soundly, ``atoms.py``),
so one level costs O(√k) even at k = 10^7; a product of levels costs the product of
those counts (times a log for the sort). ``cost`` estimates this before anything is built;
above the ``Budget`` the exact sum is not attempted and the row shows the best closed form
(basic, advanced, KOV Thm 3.4/3.5, zCDP) as an upper bound, with the reason.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpviz import budget as budgets
from dpviz.bounded_cache import bounded_cache
from dpviz.budget import Budget, Cost, cost_of
from dpviz.composition import advanced, basic, kov, zcdp
from dpviz.composition.atoms import LossAtoms, deltas_at, epsilons
from dpviz.composition.binomial_atoms import binomial_atom_count, binomial_atoms, binomial_atoms_many
from dpviz.composition.levels import Level, Levels, log_no_delta
from dpviz.guarantee import DeltaCurve, Guarantee, Kind, Solved
from dpviz.validation import ParameterError

SOURCE_HOMOGENEOUS = "KOV Thm 3.3 (exact)"
SOURCE_HETEROGENEOUS = "KOV Thm 3.3, product of canonical pairs (exact)"

MAX_ATOMS = 4_000_000
"""Largest number of loss atoms for the exact heterogeneous sum (≈500 MB of arrays), whatever
the budget: ``loss_atoms`` refuses more."""

CLOSED_FORMS = (basic, advanced, kov, zcdp)
"""The cheap sound routes shown in place of the optimum when it is over budget."""


ATOM_COUNT_CAP = 2**62
"""``atom_count`` stops multiplying here: far above any budget, and still a float (the product for
250 distinct levels, about 10^370, overflowed the conversion to float in the cost estimate)."""


def atom_count(levels: Levels) -> int:
    """Number of loss atoms the exact method sums over: Π over levels with ε > 0 of the atoms
    each binomial keeps (count_i + 1 up to ≈ 40√count_i, ``binomial_atom_count``), capped at
    ``ATOM_COUNT_CAP``."""
    if len(levels) == 1:
        return binomial_atom_count(levels[0].count, levels[0].epsilon)
    n = 1
    for lv in levels:
        if lv.epsilon > 0:
            n = min(n * binomial_atom_count(lv.count, lv.epsilon), ATOM_COUNT_CAP)
    return n


def cost(levels: Levels) -> Cost:
    """Estimated time and memory of the exact sum (``dpviz.budget`` units)."""
    n = atom_count(levels)
    if len(levels) == 1:
        return cost_of("binomial_atom", n, what=f"{n:,} loss atoms")
    atoms = f"{n:,}" if n < ATOM_COUNT_CAP else f"more than {float(ATOM_COUNT_CAP):.1e}"
    return cost_of("product_atom", n * max(1.0, math.log2(max(n, 2))), memory_units=n,
                   what=f"{atoms} loss atoms of {len(levels)} levels")


SMALL_ATOMS = 4_000
"""Homogeneous atom sets of at most this many atoms (k up to about 10⁴) are also kept in a larger
cache of their own (``_small_binomials``: 128 of them, at most about 20 MB with their prefix sums)."""


SMALL_KEPT = 128
"""How many small homogeneous atom sets ``_small_binomials`` remembers."""
_small: OrderedDict[tuple[int, float, float], LossAtoms] = OrderedDict()
_small_lock = threading.Lock()


def _small_binomials(keys: Sequence[tuple[int, float, float]]) -> list[LossAtoms]:
    """``LossAtoms.binomial`` of each (k, ε0, δ0), remembered (the ``SMALL_KEPT`` last asked for): an
    ε-against-k curve asks for about 50 k at each (ε0, δ0), more than ``loss_atoms`` keeps, so each
    change of its target δ rebuilt every one. Those not remembered are built together, one weight
    pass per (ε0, δ0) (``LossAtoms.binomials``: the same sets)."""
    with _small_lock:
        missing = [key for key in dict.fromkeys(keys) if key not in _small]
    built: dict[tuple[int, float, float], LossAtoms] = {}
    for eps0, delta0 in dict.fromkeys((e, d) for _, e, d in missing):
        ks = [k for k, e, d in missing if (e, d) == (eps0, delta0)]
        built.update(zip([(k, eps0, delta0) for k in ks],
                         LossAtoms.binomials(ks, eps0=eps0, delta0=delta0), strict=True))
    with _small_lock:
        out = []
        for key in keys:
            k, eps0, delta0 = key  # evicted meanwhile by another session's rerun: built again
            atoms = _small.get(key) or built.get(key) or LossAtoms.binomial(k=k, eps0=eps0, delta0=delta0)
            _small[key] = atoms
            _small.move_to_end(key)
            out.append(atoms)
        while len(_small) > SMALL_KEPT:
            _small.popitem(last=False)
    return out


def _small_binomial(k: int, eps0: float, delta0: float) -> LossAtoms:
    return _small_binomials([(k, eps0, delta0)])[0]


def forget() -> None:
    """Drop every atom set remembered here (``loss_atoms`` and the small sets, which keep their
    answers): a benchmark's repeat then computes, not reads, its answer."""
    loss_atoms.cache_clear()
    with _small_lock:
        _small.clear()


def _build_small(many: Sequence[Levels], budget: Budget | None) -> None:
    """Build the small homogeneous atom sets among ``many`` that the budget admits, together
    (``_small_binomials``), before each is asked for one by one."""
    b = budgets.resolve(budget)
    _small_binomials([(lv[0].count, lv[0].epsilon, lv[0].delta) for lv in many
                      if len(lv) == 1 and atom_count(lv) <= SMALL_ATOMS and b.admits(cost(lv))])


ATOM_SETS_KEPT = 256
"""Atom sets ``loss_atoms`` keeps (least recently used dropped), within ``ATOM_BYTES_KEPT``."""
ATOM_BYTES_KEPT = 128e6
"""Bytes those sets hold at most (``_atom_bytes``): one of the largest allowed (``MAX_ATOMS``), or
hundreds of a page's usual few thousand atoms."""


def _atom_bytes(atoms: LossAtoms) -> float:
    """The bytes an atom set keeps alive, from above: its two columns, and as much again for what
    is derived from them (sorted copies, cumulative sums)."""
    return 2.0 * (atoms.loss.nbytes + atoms.log_p.nbytes)


@bounded_cache(entries=ATOM_SETS_KEPT, max_bytes=ATOM_BYTES_KEPT, held=_atom_bytes)
def loss_atoms(levels: Levels) -> LossAtoms:
    """The privacy loss atoms of the composed canonical pairs (kept by ``dpviz.bounded_cache``:
    the Database priors page asks for 35 sets on every rerun, which thrashed an LRU of 32 entries;
    small homogeneous sets are also kept by ``_small_binomial``)."""
    if len(levels) == 1:
        lv = levels[0]
        if atom_count(levels) <= SMALL_ATOMS:
            return _small_binomial(lv.count, lv.epsilon, lv.delta)
        return LossAtoms.binomial(k=lv.count, eps0=lv.epsilon, delta0=lv.delta)
    _check_size(levels)
    return _product(levels, {(lv.count, lv.epsilon): binomial_atoms(lv.count, lv.epsilon)
                             for lv in levels if lv.epsilon != 0})


Binomials = Mapping[tuple[int, float], tuple[NDArray[np.float64], NDArray[np.float64]]]
"""``binomial_atoms(count, ε)`` by (count, ε)."""


def _check_size(levels: Levels) -> None:
    """Refuse a product of more than ``MAX_ATOMS`` atoms (``loss_atoms``)."""
    n = atom_count(levels)
    if n > MAX_ATOMS:
        raise ParameterError(
            "levels", f"{len(levels)} levels with {n:,} loss atoms",
            f"at most {MAX_ATOMS:,} atoms for the exact heterogeneous optimum "
            "(use fewer distinct levels, or the PLD accountant)")


def _product(levels: Levels, binomials: Binomials) -> LossAtoms:
    """The atoms of several levels: every sum of one atom of each level's binomial (levels with
    ε = 0 add no loss), scaled by Π(1 − δ_l)^count, sorted by decreasing loss."""
    loss = np.zeros(1)
    log_p = np.zeros(1)
    terms = 1
    for lv in levels:
        if lv.epsilon == 0:
            continue
        loss_l, log_p_l = binomials[(lv.count, lv.epsilon)]  # tails lumped soundly
        loss = np.add.outer(loss, loss_l).ravel()
        log_p = np.add.outer(log_p, log_p_l).ravel()
        terms *= lv.count + 1
    log_free = log_no_delta(levels)
    atoms = LossAtoms.from_masses(loss, log_p + log_free, p_inf=-math.expm1(log_free))
    return LossAtoms(loss=atoms.loss, log_p=atoms.log_p, p_inf=atoms.p_inf, terms=terms)


def loss_atoms_many(many: Sequence[Levels]) -> list[LossAtoms]:
    """``loss_atoms`` of each composition, fresh (neither cache is read or filled: HBW Thm 3's and
    Cor. 6's 40 one-off terms would evict the shared sets): every binomial the compositions need
    built together, one ``binomial_atoms_many`` pass per distinct ε (the same floats as one at a
    time), so Thm 3's 40 terms and Cor. 6's, which share their subsampled levels, cost two passes."""
    for levels in many:
        if len(levels) > 1:
            _check_size(levels)
    wanted: dict[float, dict[int, None]] = {}
    for levels in many:
        for lv in levels:
            if lv.epsilon != 0 or len(levels) == 1:  # one level: its binomial even at ε = 0
                wanted.setdefault(lv.epsilon, {})[lv.count] = None
    binomials: dict[tuple[int, float], tuple[NDArray[np.float64], NDArray[np.float64]]] = {}
    for eps, counts in wanted.items():
        binomials.update(zip([(k, eps) for k in counts], binomial_atoms_many(list(counts), eps), strict=True))
    return [LossAtoms.from_binomial(levels[0].count, levels[0].delta,
                                    *binomials[(levels[0].count, levels[0].epsilon)])
            if len(levels) == 1 else _product(levels, binomials) for levels in many]


def _source(levels: Levels) -> str:
    return SOURCE_HOMOGENEOUS if len(levels) == 1 else SOURCE_HETEROGENEOUS


def _atoms_or_reason(levels: Levels, budget: Budget | None) -> LossAtoms | str | Guarantee:
    """The loss atoms; the reason the exact sum is over budget (a closed form answers
    instead); or a not-computed Guarantee beyond the hard size limit ``MAX_ATOMS``."""
    c = cost(levels)
    b = budgets.resolve(budget)
    if not b.admits(c):
        return b.reason(c)
    try:
        return loss_atoms(levels)
    except ParameterError as exc:
        return Guarantee.not_computed(source=_source(levels), reason=f"too large for the exact sum: {exc}")


def _fallback(levels: Levels, reason: str, results: list[Guarantee], value: Solved) -> Guarantee:
    """The smallest ``value`` ("epsilon" or "delta") among the closed forms, as the upper bound
    it is, with the reason the optimum was not computed; not computed if none applies."""
    ok = [g for g in results if g.feasible]
    if not ok:
        return Guarantee.not_computed(source=_source(levels), solved=value,
                                      reason=f"{reason}; no closed form applies either")
    best = min(ok, key=lambda g: getattr(g, value))
    return Guarantee(epsilon=best.epsilon, delta=best.delta, kind=Kind.UPPER, source=best.source,
                     reason=f"exact optimum {reason}; best closed form shown", solved=value)


def delta_for_epsilon(levels: Levels, *, epsilon: float, budget: Budget | None = None) -> Guarantee:
    """δ_opt(ε): exact for every ε ≥ 0, not only the Thm 3.3 grid points."""
    atoms = _atoms_or_reason(levels, budget)
    if isinstance(atoms, Guarantee):
        return atoms
    if isinstance(atoms, str):
        return _fallback(levels, atoms, [m.delta_for_epsilon(levels, epsilon=epsilon) for m in CLOSED_FORMS],
                         "delta")
    return Guarantee(epsilon=epsilon, delta=min(atoms.delta(epsilon), 1.0),
                     kind=Kind.EXACT, source=_source(levels), solved="delta")


def delta_for_epsilon_once(levels: Levels, *, epsilon: float, budget: Budget | None = None) -> Guarantee:
    """:func:`delta_for_epsilon` for levels asked about once (the planner's search moves ε0 or k at
    every step): one level builds only the atoms with loss > ε, all that δ(ε) sums, so the number is
    the same bit for bit, in about half the time at large k, and nothing is cached."""
    if len(levels) != 1 or not budgets.resolve(budget).admits(cost(levels)):
        return delta_for_epsilon(levels, epsilon=epsilon, budget=budget)  # the same words and bounds
    lv = levels[0]
    part = LossAtoms.binomial(k=lv.count, eps0=lv.epsilon, delta0=lv.delta, above=epsilon)
    return Guarantee(epsilon=epsilon, delta=min(part.delta(epsilon), 1.0),
                     kind=Kind.EXACT, source=_source(levels), solved="delta")


def epsilon_for_delta(levels: Levels, *, delta: float, budget: Budget | None = None) -> Guarantee:
    """Smallest ε with δ_opt(ε) ≤ δ (``.delta`` is δ_opt of that ε, ≤ the target); impossible below
    the floor 1 − Π(1 − δ_i)."""
    return epsilons_for_delta([levels], delta=delta, budget=budget)[0]


def epsilons_for_delta(many: Sequence[Levels], *, delta: float,
                       budget: Budget | None = None) -> list[Guarantee]:
    """:func:`epsilon_for_delta` for each of ``many`` compositions (an ε-against-k curve): the
    searches and δ_opt of their answers run side by side (``atoms.epsilons``), the same numbers as
    one at a time."""
    out: list[Guarantee | None] = [None] * len(many)
    solvable: list[tuple[int, LossAtoms]] = []
    _build_small(many, budget)
    for i, levels in enumerate(many):
        atoms = _atoms_or_reason(levels, budget)
        if isinstance(atoms, Guarantee):
            out[i] = atoms
        elif isinstance(atoms, str):
            out[i] = _fallback(levels, atoms, [m.epsilon_for_delta(levels, delta=delta)
                                               for m in CLOSED_FORMS], "epsilon")
        else:
            solvable.append((i, atoms))
    found = epsilons([(atoms, delta) for _, atoms in solvable])
    reached = [(i, atoms, eps) for (i, atoms), eps in zip(solvable, found, strict=True) if eps is not None]
    at_eps = deltas_at([(atoms, eps) for _, atoms, eps in reached])  # remembered by the searches
    for (i, _atoms, eps), d in zip(reached, at_eps, strict=True):
        out[i] = Guarantee(epsilon=eps, delta=min(d, 1.0), kind=Kind.EXACT, source=_source(many[i]))
    for (i, atoms), answer in zip(solvable, found, strict=True):
        if answer is None:
            out[i] = Guarantee.impossible(
                source=_source(many[i]),
                reason=f"no ε reaches δ below 1 − Π(1 − δ_i) = {atoms.p_inf:.6g}")
    return out  # type: ignore[return-value]  # each entry is set above


def delta_curve(levels: Levels, epsilons: ArrayLike, *, budget: Budget | None = None) -> DeltaCurve:
    """δ_opt at each ε of ``epsilons`` (one atom set, one budget check): the same numbers as
    :func:`delta_for_epsilon` point by point; over budget, the best closed form at each ε."""
    eps = np.asarray(epsilons, dtype=float).ravel()
    atoms = _atoms_or_reason(levels, budget)
    if isinstance(atoms, LossAtoms):
        return DeltaCurve.bounds(eps, [min(d, 1.0) for d in atoms.deltas(eps)], kind=Kind.EXACT,
                                 source=_source(levels), reason="")
    points = [delta_for_epsilon(levels, epsilon=float(e), budget=budget) for e in eps]
    return DeltaCurve.pointwise(points, eps, source=_source(levels))


def kov_grid(*, k: int, eps0: float, delta0: float) -> tuple[np.ndarray, np.ndarray]:
    """KOV Thm 3.3 as stated: ((k − 2i)ε0, δ_(i)) for i = 0..⌊k/2⌋.

    δ_(i) = 1 − (1 − δ0)^k (1 − δ_i) with
    δ_i = Σ_{l<i} C(k,l)(e^{(k−l)ε0} − e^{(k−2i+l)ε0}) / (1 + e^{ε0})^k.
    """
    atoms = loss_atoms((Level(epsilon=eps0, delta=delta0, count=k),))
    eps = (k - 2.0 * np.arange(k // 2 + 1)) * eps0
    return eps, np.array([min(atoms.delta(float(e)), 1.0) for e in eps])
