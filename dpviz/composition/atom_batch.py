"""δ(ε)'s windowed log-sum at many (atom set, ε) pairs in one pass, and searches run side by side.

``LossAtoms.log_finite_part`` (``atoms.py``) is a dozen numpy calls on a few atoms: at a page's 49 k of
an ε-against-k curve, or 160 ε of a δ-against-ε curve, the calls' overhead, not the arithmetic, was
the cost. Here each step runs once over the atoms of every pair (numpy's ufuncs give each element the
same float wherever it sits in an array) and only the sums and the searches go pair by pair, so each
value is the float ``LossAtoms.log_finite_part`` gives for its one pair, bit for bit
(tests/composition/test_atom_batch.py). A search that needs such values one after another
(``LossAtoms``'s ε(δ)) is written as a generator that yields each ε and is sent its value: :func:`run`
takes the steps of many searches together, one batched evaluation per round, and each search takes
the path it takes alone.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Generator, Sequence
from typing import Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from dpviz.numerics import log1mexp, logsumexp, logsumexp_runs

WINDOW = 1.0
"""Atoms within this distance above ε are summed term by term (``atoms.py``'s module docstring)."""

R = TypeVar("R")
Steps = Generator[tuple[float, ...], list[float], R]
"""A search: yields the ε at which it needs ``log_finite_part`` (a few at a time), is sent their
values, returns its answer."""


class Atoms(Protocol):
    """What the sums read of a ``LossAtoms``: atoms sorted by decreasing loss, −loss, and the prefix
    sums ln Σ p and ln Σ p e^{−L}."""

    @property
    def loss(self) -> NDArray[np.float64]: ...
    @property
    def log_p(self) -> NDArray[np.float64]: ...
    @property
    def _neg_loss(self) -> NDArray[np.float64]: ...
    @property
    def _neg_loss_list(self) -> list[float] | None: ...
    @property
    def _prefix(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]: ...
    def _prefix_to(self, n: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]: ...
    @property
    def _values(self) -> dict[float, float]: ...
    def _remember(self, eps: float, value: float) -> None: ...
    def _log_finite_part(self, eps: float) -> float: ...
    def log_finite_part(self, eps: float) -> float: ...


def log_finite_parts(requests: Sequence[tuple[Atoms, float]]) -> list[float]:
    """ln Σ_{L_a > ε} p_a (1 − e^{ε − L_a}) for each (atoms, ε) (−inf when no atom is above ε): atoms
    within ``WINDOW`` above ε term by term in log space, the rest through the prefix sums, where
    e^{ε−L} ≤ e^{−WINDOW} and their difference cannot cancel (KOV Thm 3.3; Steinke Prop. 7); the two
    parts added by ``logsumexp`` (:func:`_add_parts`). The values each atom set remembers
    (``LossAtoms._values``) are read, and those computed here are remembered there: a search's last
    evaluation is its caller's δ(ε) at the answer (``optimal.epsilons_for_delta``). One pair:
    ``log_finite_part`` itself (the same float without the batch's setup)."""
    if len(requests) <= 1:
        return [atoms.log_finite_part(e) for atoms, e in requests]
    out: list[float | None] = [atoms._values.get(float(e)) for atoms, e in requests]
    missing = [i for i, v in enumerate(out) if v is None]
    if missing:
        asked = [(requests[i][0], float(requests[i][1])) for i in missing]
        computed = [asked[0][0]._log_finite_part(asked[0][1])] if len(asked) == 1 else _computed(asked)
        for i, (atoms, e), value in zip(missing, asked, computed, strict=True):
            atoms._remember(e, value)
            out[i] = value
    return out  # type: ignore[return-value]  # every entry is set above


def _counts(atoms: Atoms, eps: float) -> tuple[int, int]:
    """The numbers of atoms with L > ε and with L > ε + ``WINDOW``: ``searchsorted`` on −loss, or
    ``bisect`` on its list where the set keeps one (``_neg_loss_list``: the same indices for every ε
    but NaN, without numpy's setup of two calls, most of a round's time at a few atoms a search)."""
    listed = atoms._neg_loss_list
    if listed is not None and eps == eps:
        return bisect_left(listed, -eps), bisect_left(listed, -(eps + WINDOW))
    neg = atoms._neg_loss
    return int(neg.searchsorted(-eps, side="left")), int(neg.searchsorted(-(eps + WINDOW), side="left"))


def _computed(requests: Sequence[tuple[Atoms, float]]) -> list[float]:
    """``log_finite_parts`` of two or more pairs, each computed (nothing remembered is read)."""
    n = len(requests)
    eps_list = [float(e) for _, e in requests]
    m_list, j_list = [0] * n, [0] * n  # atoms with L > ε, with L > ε + W
    la_list, lb_list = [0.0] * n, [0.0] * n
    for i, (atoms, _) in enumerate(requests):
        m_list[i], j_list[i] = _, ji = _counts(atoms, eps_list[i])
        if ji > 0:  # the prefix sums only where they are read (millions of atoms: seconds)
            log_a, log_b = atoms._prefix_to(ji)
            la_list[i], lb_list[i] = float(log_a[ji - 1]), float(log_b[ji - 1])
    eps, m, j = np.array(eps_list), np.array(m_list, dtype=np.int64), np.array(j_list, dtype=np.int64)
    la, lb = np.array(la_list), np.array(lb_list)
    windowed = (j < m).nonzero()[0].tolist()
    window = np.full(n, math.nan)
    if windowed:
        lengths = (m - j)[windowed]
        loss = np.concatenate([requests[i][0].loss[j[i]:m[i]] for i in windowed])
        log_p = np.concatenate([requests[i][0].log_p[j[i]:m[i]] for i in windowed])
        gaps = loss - np.repeat(eps[windowed], lengths)
        window[windowed] = logsumexp_runs(log_p + log1mexp(-gaps), lengths)
    y = np.minimum(eps + lb - la, -WINDOW)  # ≤ −W by construction
    prefix = la + log1mexp(y)
    out = _add_parts(window, prefix, has_window=j < m, has_prefix=j > 0)
    out[m == 0] = -math.inf
    return out.tolist()


def _add_parts(a: NDArray[np.float64], b: NDArray[np.float64], *, has_window: NDArray[np.bool_],
               has_prefix: NDArray[np.bool_]) -> NDArray[np.float64]:
    """``logsumexp`` of each pair's parts, [a, b] or the one it has, as the one call would give it: of
    one term, that term (log1p(0) + ln 1 + x; +∞ and NaN pass); of two, the larger x plus
    log1p(e^{smaller − x}) (its other term is e^{−∞} = 0, so the sum is that one number), or ln 2 + x
    when they are equal; outside that common case (a largest term +∞ or NaN, a result that is not
    finite) ``logsumexp`` itself."""
    out = np.where(has_window, a, b)
    both = (has_window & has_prefix).nonzero()[0]
    if both.size:
        x, z = a[both], b[both]
        top, low = np.maximum(x, z), np.minimum(x, z)
        equal = x == z
        with np.errstate(invalid="ignore"):  # −∞ − (−∞): its answer is −∞ below
            s = np.where(equal, 0.0, np.exp(low - top))
            two = np.log1p(s) + np.log(np.where(equal, 2.0, 1.0)) + top
        two[top == -math.inf] = -math.inf
        for i in (~np.isfinite(two) & (top != -math.inf)).nonzero()[0].tolist():
            two[i] = logsumexp(np.array([x[i], z[i]]))
        out[both] = two
    return out


def run(searches: Sequence[tuple[Atoms, Steps[R]]]) -> list[R]:
    """Each search's answer, the searches' evaluations taken together round by round (module
    docstring): the same answers as each run alone."""
    out: list[R | None] = [None] * len(searches)
    waiting: list[tuple[int, tuple[float, ...]]] = []
    for i, (_, steps) in enumerate(searches):
        try:
            waiting.append((i, next(steps)))
        except StopIteration as done:
            out[i] = done.value
    while waiting:
        values = log_finite_parts([(searches[i][0], e) for i, asked in waiting for e in asked])
        following = []
        at = 0
        for i, asked in waiting:
            try:
                following.append((i, searches[i][1].send(values[at:at + len(asked)])))
            except StopIteration as done:
                out[i] = done.value
            at += len(asked)
        waiting = following
    return out  # type: ignore[return-value]  # every search has returned
