"""The exact route: finite laws composed atom by atom (Steinke Prop. 7, both directions).

A part with a canonical pair is composed by its binomial (KOV eq. 16, ``dpviz.composition.atoms``);
any other finite law by its count vectors (multinomial masses), merged on a lattice when its losses
are whole multiples of the mechanism's grid unit. The route is admitted by its estimated cost
(``exact_cost``, ``dpviz.budget``) and refuses beyond ``MAX_ATOMS``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from scipy.special import gammaln

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost, cost_of
from dpviz.composition.atoms import LossAtoms
from dpviz.composition.binomial_atoms import binomial_atom_count
from dpviz.guarantee import Guarantee, Kind, Solved
from dpviz.mechanisms.base import Accountable
from dpviz.mechanisms.parts import Part, checked_parts, checked_target
from dpviz.pld.law import LossLaw

MAX_ATOMS = 1 << 21
"""Most atoms the exact route enumerates (per direction) before leaving it to the PLD."""

MAX_OUTCOMES = 8
"""Most distinct atoms of one step the exact route enumerates count vectors for."""

EXACT_SOURCE = "exact atoms (Steinke Prop. 7)"


def _compositions(n: int, k: int) -> np.ndarray:
    """All count vectors of length n with sum k (rows, int64), in lexicographic order: each row
    (c_1, …, c_{n−1}) is extended by every c_j in 0..(what is left), the last count is what is left.
    Built a column at a time (ragged ranges, no Python loop over rows)."""
    if n == 1:
        return np.array([[k]], dtype=np.int64)
    left = np.array([k], dtype=np.int64)  # k minus the counts so far, per row
    columns: list[np.ndarray] = []
    for _ in range(n - 1):
        sizes = left + 1
        parent = np.repeat(np.arange(left.size), sizes)
        starts = np.cumsum(sizes) - sizes
        c = np.arange(parent.size, dtype=np.int64) - np.repeat(starts, sizes)
        columns = [col[parent] for col in columns] + [c]
        left = left[parent] - c
    return np.column_stack([*columns, left])


def _n_compositions(n: int, k: int) -> int:
    return math.comb(k + n - 1, n - 1)


REMEMBERED_ROWS = 1 << 18
"""Count vectors kept between calls up to this many rows (at most ``MAX_OUTCOMES`` int64 each, 16 MiB)."""


def _count_table(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(count vectors, ln of their multinomial coefficients k!/Π c_i!) of n outcomes and k steps: what
    a law's k-fold atoms need besides its own losses and masses. ln c! is looked up in a table of
    ln 0! … ln k! (the same values as ``gammaln`` of every entry: 6 million entries cost 0.3 s)."""
    counts = _compositions(n, k)
    log_factorial = gammaln(np.arange(k + 1, dtype=np.float64) + 1.0)
    return counts, gammaln(k + 1.0) - log_factorial[counts].sum(axis=1)


@lru_cache(maxsize=4)
def _remembered(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``_count_table``, kept: a noise search composes the same k for every noise it tries (the
    geometric mechanism at Δ = 2, 390 steps, built 76,636 vectors ten times). Read only: both arrays
    are made unwritable."""
    counts, coef = _count_table(n, k)
    counts.flags.writeable = False
    coef.flags.writeable = False
    return counts, coef


Tables = dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]
"""Count tables made for one call of ``exact``, by (outcomes, k): both directions use them."""


def _counts(n: int, k: int, made: Tables | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``_remembered`` where it is small enough to keep, else made for this call (kept in ``made``
    for the other direction: 2 million rows took 0.3 s each time)."""
    if _n_compositions(n, k) <= REMEMBERED_ROWS:
        return _remembered(n, k)
    if made is None:
        return _count_table(n, k)
    if (n, k) not in made:
        made[n, k] = _count_table(n, k)
    return made[n, k]


def _merge_lattice(total: np.ndarray, err: np.ndarray, lp: np.ndarray, index: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Atoms at the same lattice point merged: masses summed (log space), the loss the largest of
    the group's rounded-up losses (a larger loss only raises δ(ε))."""
    order = np.argsort(index, kind="stable")
    idx, up, lp = index[order], (total + err)[order], lp[order]
    starts = np.flatnonzero(np.concatenate([[True], idx[1:] != idx[:-1]]))
    return np.maximum.reduceat(up, starts), np.zeros(starts.size), np.logaddexp.reduceat(lp, starts)


def _lattice(law: LossLaw, unit: float | None) -> np.ndarray | None:
    """Each kept atom's loss in lattice steps of ``unit`` (when every loss is a whole multiple of it,
    to 1e-9), else None."""
    if unit is None or not unit > 0:
        return None
    loss = law.loss[law.p > 0]
    steps = np.rint(loss / unit)
    if not np.all(np.abs(steps * unit - loss) <= 1e-9 * np.maximum(np.abs(loss), unit)):
        return None
    return steps.astype(np.int64)


def _lattice_plan(steps: np.ndarray) -> tuple[int, int, np.ndarray]:
    """(lowest step, stride g, offsets): step_i = lowest + g·offset_i with the offsets' gcd 1, so the
    k-fold sums fill every point of their lattice (docs/MATH.md §24)."""
    lowest = int(steps.min())
    g = math.gcd(*(int(v) for v in steps - lowest)) or 1
    return lowest, g, (steps - lowest) // g


def _lattice_cells(steps: np.ndarray, k: int) -> float:
    """Entries the lattice recursion touches (``_lattice_power``): at step t the support has t·span + 1
    points, each read once per outcome; plus 50 entries' worth per outcome and step for the numpy
    calls themselves (about 2 µs each)."""
    span = int(_lattice_plan(steps)[2].max())
    return float(steps.size) * (k + span * k * (k - 1) / 2.0 + 50.0 * k)


def _by_lattice(steps: np.ndarray | None, k: int) -> bool:
    """Whether the lattice recursion is estimated cheaper than the count vectors (``dpviz.budget``)."""
    if steps is None or steps.size == 0:
        return False
    vectors = cost_of("exact_cell", _n_compositions(steps.size, k) * steps.size).seconds
    return cost_of("lattice_cell", _lattice_cells(steps, k)).seconds < vectors


def _lattice_power(loss: np.ndarray, log_p: np.ndarray, steps: np.ndarray, unit: float, k: int
                   ) -> tuple[np.ndarray, np.ndarray, float]:
    """The k-fold law of a lattice law merged per lattice point, by k steps of a convolution in log
    space (docs/MATH.md §24): (loss rounded up, ln P-mass, relative error bound of the masses).

    A lattice point's atoms are those ``_merge_lattice`` merges (the count vectors c with c·steps at
    that point): its mass is their log-sum, its loss j·unit plus the largest of their summed offsets
    from the lattice (a max-plus recursion beside the log-sum one), rounded up by a bound on every
    rounding."""
    lowest, g, offsets = _lattice_plan(steps)
    span = int(offsets.max())
    dev = loss - steps * unit  # each atom's offset from its lattice point (|dev| ≤ 1e-9·(|loss| + unit))
    mass = np.zeros(1)
    top = np.zeros(1)
    for t in range(k):
        size = t * span + 1
        nxt = np.full(size + span, -np.inf)
        far = np.full(size + span, -np.inf)
        for o, lp, d in zip(offsets.tolist(), log_p.tolist(), dev.tolist(), strict=True):
            cut = slice(o, o + size)
            np.logaddexp(nxt[cut], mass + lp, out=nxt[cut])
            np.maximum(far[cut], top + d, out=far[cut])
        mass, top = nxt, far
    keep = mass > -np.inf
    index = k * lowest + g * np.flatnonzero(keep)
    mass, top = mass[keep], top[keep]
    on_lattice = index * unit
    exact_loss = on_lattice + top
    ulp = 2.0**-52  # twice the unit round-off: every bound below is doubled
    biggest = float(np.max(np.abs(loss)))
    bound = ulp * (np.abs(on_lattice) + 2.0 * k * (biggest + unit) + k * k * float(np.max(np.abs(dev)))
                   + 2.0 * np.abs(exact_loss))
    # |ln mass| after t steps is at most t·max|ln p| (between one path's mass and 1); step t adds per
    # outcome one rounded sum and one logaddexp (a rounded difference, exp/log1p, a rounded sum)
    most = float(np.max(np.abs(log_p)))
    log_error = ulp * (k * most + steps.size * (3.0 * most * k * (k + 1) / 2.0 + 2.0 * k))
    return exact_loss + bound, mass, math.expm1(log_error)


def _part_atoms(law: LossLaw, k: int, pair: tuple[float, float] | None, unit: float | None = None,
                made: Tables | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """(loss, loss error bound, ln P-mass, P(L = +∞), relative error bound of the masses beyond
    ``LossAtoms.relative_error``) of the k-fold law; atoms on a lattice of spacing ``unit`` (when
    every loss is a whole multiple of it) are merged per lattice point, by the lattice recursion
    where it is estimated cheaper than the count vectors. ``made``: the count tables of this call
    (``_counts``)."""
    if pair is not None:
        a = LossAtoms.binomial(k=k, eps0=pair[0], delta0=pair[1])
        return a.loss, np.zeros_like(a.loss), a.log_p, a.p_inf, 0.0
    keep = law.p > 0
    loss, log_p = law.loss[keep], np.log(law.p[keep])
    p_inf = -math.expm1(k * math.log1p(-law.p_inf)) if law.p_inf < 1 else 1.0
    if loss.size == 0:  # every outcome has P = 0 or Q = 0
        return np.zeros(0), np.zeros(0), np.zeros(0), p_inf, 0.0
    steps = _lattice(law, unit)
    if steps is not None and _by_lattice(steps, k):
        up, lp, mass_error = _lattice_power(loss, log_p, steps, unit, k)  # type: ignore[arg-type]
        return up, np.zeros_like(up), lp, p_inf, mass_error
    counts, coef = _counts(loss.size, k, made)
    total = counts @ loss
    err = (loss.size + 2) * 2.0**-52 * (counts @ np.abs(loss))
    with np.errstate(invalid="ignore"):
        terms = np.where(counts > 0, counts * log_p, 0.0).sum(axis=1)
        lp = coef + terms
    if steps is not None:
        return (*_merge_lattice(total, err, lp, counts @ steps), p_inf, 0.0)
    return total, err, lp, p_inf, 0.0


def _part_size(m: Accountable, k: int) -> tuple[int, float, float] | str:
    """(atoms, count-vector entries, lattice-recursion entries) of one part's k-fold law in the
    direction that needs more (``_part_atoms``'s choice), or why the route does not apply."""
    law = m.law
    if law.continuous is not None:
        return f"{m.label} has a continuous loss law"
    pair = m.canonical_pair
    if pair is not None:
        atoms = binomial_atom_count(k, pair[0])
        return atoms, float(atoms), 0.0
    outcomes = max(int(np.count_nonzero(law.p > 0)), int(np.count_nonzero(law.q > 0)), 1)
    if outcomes > MAX_OUTCOMES:
        return f"more than {MAX_OUTCOMES} outcomes per step"
    vectors = _n_compositions(outcomes, k)
    lattices = [_lattice(d, m.grid_unit) for d in ((law,) if law.symmetric else (law, law.reversed()))]
    if all(_by_lattice(s, k) for s in lattices):
        span = max(int(_lattice_plan(s)[2].max()) for s in lattices)  # type: ignore[arg-type]
        return k * span + 1, 0.0, max(_lattice_cells(s, k) for s in lattices)  # type: ignore[arg-type]
    return vectors, float(vectors * outcomes), 0.0


def exact_cost(parts: Sequence[Part]) -> Cost | str:
    """The exact route's estimated work for both directions it needs (``dpviz.budget``): per part the
    count vectors enumerated (atoms × outcomes) or the lattice recursion's entries, then the product
    of the parts' atoms sorted; or why the route does not apply."""
    n, cells, lattice, directions = 1, 0.0, 0.0, 1 if all(m.law.symmetric for m, _ in parts) else 2
    for m, k in parts:
        size = _part_size(m, k)
        if isinstance(size, str):
            return size
        n *= size[0]
        cells += size[1]
        lattice += size[2]
        if n > MAX_ATOMS:
            return f"more than {MAX_ATOMS:,} atoms"
    what = f"{n:,} atoms"
    enumerate_ = cost_of("exact_cell", directions * cells, memory_units=cells)
    recursion = cost_of("lattice_cell", directions * lattice, memory_units=0.0)
    product = cost_of("product_atom", directions * n * max(1.0, math.log2(n)), memory_units=n)
    seconds = enumerate_.seconds + recursion.seconds + product.seconds
    return Cost(seconds, max(enumerate_.bytes, product.bytes), what)


def exact_atoms(parts: Sequence[Part], *, reverse: bool = False,
                made: Tables | None = None) -> LossAtoms | str:
    """The composed atoms of one direction (losses rounded up by their error bound), or why not.
    ``made``: count tables shared with the other direction (``_counts``)."""
    size = exact_cost(parts)
    if isinstance(size, str):
        return size
    loss = np.zeros(1)
    err = np.zeros(1)
    log_p = np.zeros(1)
    log_free = 0.0
    log_mass_error = 0.0
    for m, k in parts:
        law = m.law.reversed() if reverse else m.law
        pair = m.canonical_pair
        pl, pe, pp, pinf, mass_error = _part_atoms(law, k, pair, m.grid_unit, made)
        loss = (loss[:, None] + pl[None, :]).ravel()
        err = (err[:, None] + pe[None, :]).ravel()
        log_p = (log_p[:, None] + pp[None, :]).ravel()
        log_free += math.log1p(-pinf) if pinf < 1 else -math.inf
        log_mass_error += math.log1p(mass_error)
    up = loss + err + (len(parts) - 1) * np.abs(loss) * 2.0**-52  # one rounding per sum of parts
    p_inf = -math.expm1(log_free)
    return LossAtoms.from_masses(up, log_p, p_inf=p_inf, mass_error=math.expm1(log_mass_error))


def exact(parts: Sequence[Part], *, delta: float | None = None, epsilon: float | None = None,
          budget: Budget | None = None) -> Guarantee:
    """Exact composition of finite laws (module docstring); not computed beyond ``MAX_ATOMS`` or when
    its estimated cost (:func:`exact_cost`) is above ``budget`` (None: the command line's)."""
    t0 = time.perf_counter()
    delta, epsilon = checked_target(delta, epsilon)
    parts = checked_parts(parts)
    solved: Solved = "epsilon" if delta is not None else "delta"
    cost = exact_cost(parts)
    if isinstance(cost, Cost) and not budgets.resolve(budget).admits(cost):
        return Guarantee.not_computed(source=EXACT_SOURCE, delta=delta, epsilon=epsilon, solved=solved,
                                      reason=f"exact composition {budgets.resolve(budget).reason(cost)}")
    dirs = []
    made: Tables = {}
    for reverse in (False, True):
        if reverse and all(m.law.symmetric for m, _ in parts):
            break
        a = exact_atoms(parts, reverse=reverse, made=made)
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

