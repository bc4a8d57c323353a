"""A membership cap with a different (ε_i, δ_i) per database (HBW Thm 2 and Ex. 1, heterogeneous releases).

The worst case over priors on B~ = {b : |b| ≤ C} against 0⃗ (unbounded; 2C with bounded neighbours)
is a point mass b (HBW §IV-A), whose experiment is the composition of the releases i with b_i = 1.
So ε(δ) = max over sets S of d = min(C, k) releases of the composition of S. A release whose
(ε, δ) is at least another's in both coordinates dominates it (the other's canonical pair is a
post-processing of its own, KOV eq. 16), so only the choices that never leave a dominating release
out while taking one it dominates are compared; with levels ordered in both coordinates that is the
single greedy choice. Each choice is composed by every method of ``dpviz.composition.METHODS``
(optimal: exact for a few levels, KOV Thm 3.3 on the product of canonical pairs). docs/MATH.md §22.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from dpviz import budget as budgets
from dpviz.budget import Budget
from dpviz.composition import METHODS, Level, Levels, as_levels, optimal
from dpviz.gce.constraints import Neighbouring, check_neighbouring
from dpviz.guarantee import Guarantee, Kind
from dpviz.validation import ParameterError, check_count, check_delta

SOURCE = "HBW Thm 2, Ex. 1 (cap C, heterogeneous releases)"
MAX_CHOICES = 2000
"""Non-dominated choices compared one by one; more (many incomparable levels) are refused."""


def dominates(a: Level, b: Level) -> bool:
    """a ≠ b and a's (ε, δ) is at least b's in both coordinates: every b-release is (ε_a, δ_a)-DP."""
    return a.epsilon >= b.epsilon and a.delta >= b.delta and (a.epsilon, a.delta) != (b.epsilon, b.delta)


def choices(levels: Levels, d: int) -> list[Levels]:
    """Every choice of d releases (a count per level) that no swap of a release for one that
    dominates it improves; at most ``MAX_CHOICES`` (else a ParameterError says how to narrow it)."""
    levels = as_levels(levels)
    out: list[Levels] = []

    def undominated(n: tuple[int, ...]) -> bool:
        return not any(n[j] > 0 and n[i] < levels[i].count and dominates(levels[i], levels[j])
                       for i in range(len(levels)) for j in range(len(levels)))

    for n in _counts([lv.count for lv in levels], d):
        if undominated(n):
            out.append(tuple(replace(lv, count=c) for lv, c in zip(levels, n, strict=True) if c > 0))
            if len(out) > MAX_CHOICES:
                raise ParameterError("levels", f"{len(levels)} levels",
                                     f"at most {MAX_CHOICES:,} incomparable choices of the {d:,} releases "
                                     "a person can be in (fewer levels, or levels ordered in ε and δ)")
    return out


def _counts(caps: list[int], d: int) -> Iterator[tuple[int, ...]]:
    """Every (n_1, …, n_L) with 0 ≤ n_l ≤ caps[l] and Σ n_l = d."""
    if not caps:
        if d == 0:
            yield ()
        return
    rest = sum(caps[1:])
    for n in range(max(0, d - rest), min(caps[0], d) + 1):
        for tail in _counts(caps[1:], d - n):
            yield (n, *tail)


def compositions(levels: Levels, *, cap: int, neighbouring: Neighbouring) -> int:
    """d = min(C, k) unbounded, min(2C, k) bounded, with k the number of releases."""
    k = sum(lv.count for lv in levels)
    cap = check_count(cap, field="cap")
    return min(cap if check_neighbouring(neighbouring) == "unbounded" else 2 * cap, k)


def _worst(results: list[Guarantee], source: str) -> Guarantee:
    """The largest ε over the choices (a choice without a value decides: no value for the cap)."""
    for g in results:
        if not g.feasible:
            return replace(g, source=f"{source}: {g.source}")
    worst = max(results, key=lambda g: float(g.epsilon))  # type: ignore[arg-type]
    kind = Kind.UPPER if any(g.kind is not Kind.EXACT for g in results) else Kind.EXACT
    return replace(worst, kind=kind, source=f"{source}: {worst.source}")


def capped(levels: Levels, *, cap: int, neighbouring: Neighbouring, delta: float,
           budget: Budget | None = None) -> dict[str, Guarantee]:
    """classic (all releases, optimal), exact (the worst choice of d, composed optimally) and the
    paper's Thm 2 with each closed form (``cap_basic``, ``cap_advanced``, ``cap_kov``, …)."""
    levels = as_levels(levels)
    delta = check_delta(delta, field="delta")
    d = compositions(levels, cap=cap, neighbouring=neighbouring)
    k = sum(lv.count for lv in levels)
    out = {"classic": METHODS["optimal"].epsilon_for_delta(levels, delta=delta, budget=budget)}
    picks = choices(levels, d)
    source = f"{SOURCE}: the worst {d:,} of {k:,} releases ({len(picks):,} choice{'s' * (len(picks) > 1)})"
    per = {key: _worst([m.epsilon_for_delta(c, delta=delta) for c in picks], source)
           for key, m in METHODS.items() if not m.budgeted}
    b = budgets.resolve(budget)
    cost = sum((optimal.cost(c) for c in picks), budgets.ZERO)
    if b.admits(cost):
        exact = _worst([optimal.epsilon_for_delta(c, delta=delta, budget=budget) for c in picks], source)
    else:
        best = min((g for g in per.values() if g.feasible), key=lambda g: float(g.epsilon),  # type: ignore[arg-type]
                   default=None)
        reason = f"exact worst case {b.reason(cost)}"
        exact = (Guarantee.not_computed(source=source, reason=reason) if best is None else
                 replace(best, kind=Kind.UPPER, reason=reason + "; shown: the best bound that applies",
                         note=reason))
    out["exact"] = exact
    out |= {f"cap_{key}": g for key, g in per.items()}
    return out
