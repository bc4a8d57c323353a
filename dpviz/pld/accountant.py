"""PLD accounting with certified error bars: ε(δ) and δ(ε) as intervals [lower, upper].

A composition is a list of (loss law, count) parts. For each direction of the neighbouring
relation (the laws as given, and all of them reversed) we discretise every law twice
(``dpviz.pld.discretize``), compose by FFT with repeated squaring (``GridPLD``) and read off
δ or ε exactly from the composed grid (``LossAtoms``). The mechanism's δ(ε) is the larger of
the two directions (Steinke Prop. 7 applied to both (P, Q) and (Q, P)), so

    lower = max_dir lower_dir ≤ truth ≤ max_dir upper_dir = upper.

The cost is checked before any convolution: ``plan`` returns the a-priori grid size, and
requests above ``MAX_BINS`` raise ``ParameterError`` with that number.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dpviz.guarantee import finite_or_none
from dpviz.pld import discretize
from dpviz.pld.grid import DEFAULT_TAIL, MAX_BINS, GridPLD, composed_bins
from dpviz.pld.law import LossLaw
from dpviz.validation import ParameterError, check_count

Parts = Sequence[tuple[LossLaw, int]]

DEFAULT_H = 2e-4
"""Grid width used when none is given. Twice dp-accounting's default value_discretization_interval:
our errors are second order in h, so for DP-SGD (q = 0.01, σ = 1.1, 10⁴ steps) this gives a
certified interval of relative width 2e-4 in less time than dp-accounting's default run
(``benchmarks/results/mechanisms.md``)."""


@dataclass(frozen=True)
class Interval:
    """A certified interval for one number (ε or δ): ``lower ≤ truth ≤ upper``.

    ``None`` for ``upper`` means the method cannot certify any finite value (e.g. δ below the
    mass at +∞); ``exact`` is filled where a closed form exists. ``seconds`` is wall time.
    """

    lower: float | None
    upper: float | None
    method: str
    seconds: float = 0.0
    exact: float | None = None
    detail: str = ""

    @property
    def width(self) -> float | None:
        if self.lower is None or self.upper is None:
            return None
        return self.upper - self.lower

    @property
    def relative_width(self) -> float | None:
        w = self.width
        if w is None or self.upper is None:
            return None
        return w / self.upper if self.upper > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        out = {"lower": finite_or_none(self.lower), "upper": finite_or_none(self.upper),
               "width": finite_or_none(self.width), "method": self.method, "seconds": self.seconds}
        if self.exact is not None:
            out["exact"] = finite_or_none(self.exact)
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True)
class Composed:
    """Composed pessimistic and optimistic grids, one pair per direction."""

    upper: tuple[GridPLD, ...]
    lower: tuple[GridPLD, ...]
    h: float
    seconds: float

    def delta(self, epsilon: float) -> tuple[float, float]:
        return (max(g.delta(epsilon) for g in self.lower), max(g.delta(epsilon) for g in self.upper))

    def epsilon(self, delta: float) -> tuple[float | None, float | None]:
        lows = [g.epsilon(delta) for g in self.lower]
        ups = [g.epsilon(delta) for g in self.upper]
        lo = None if any(v is None for v in lows) else max(lows)  # type: ignore[type-var]
        up = None if any(v is None for v in ups) else max(ups)  # type: ignore[type-var]
        return lo, up


def directions(parts: Parts) -> list[list[tuple[LossLaw, int]]]:
    """The parts as given and all reversed (one list when every law is symmetric)."""
    if all(law.symmetric for law, _ in parts):
        return [list(parts)]
    return [list(parts), [(law.reversed(), k) for law, k in parts]]


def plan(parts: Parts, *, h: float = DEFAULT_H, tail: float = DEFAULT_TAIL) -> int:
    """Largest grid (bins) the composition will need; raises ``ParameterError`` above MAX_BINS.

    Discretises each law once (cheap: one pass over its support) and sizes the composed grid
    from the single-step means and variances, before any convolution is run.
    """
    return _plan_grids([[(discretize.pessimistic(law, h=h, tail=tail), k) for law, k in d]
                        for d in directions(parts)], h)


def _plan_grids(grids: list[list[tuple[GridPLD, int]]], h: float) -> int:
    worst = max(composed_bins(single) for single in grids)
    if worst > MAX_BINS:
        raise ParameterError("h", h, f"coarse enough that the composed grid stays below {MAX_BINS:,} "
                                     f"bins (needs ≈{worst:,}; increase h or reduce k)")
    return worst


def compose(parts: Parts, *, h: float = DEFAULT_H, tail: float = DEFAULT_TAIL) -> Composed:
    """Upper and lower composed grids for every direction (see module docstring)."""
    if not parts:
        raise ParameterError("mechanisms", "[]", "a non-empty list")
    for _, k in parts:
        check_count(k, field="k")
    t0 = time.perf_counter()
    dirs = directions(parts)
    pess = [[(discretize.pessimistic(law, h=h, tail=tail), k) for law, k in d] for d in dirs]
    _plan_grids(pess, h)
    opt = [[(discretize.optimistic(law, h=h, tail=tail), k) for law, k in d] for d in dirs]
    ups, lows = [], []
    for grids, out in ((pess, ups), (opt, lows)):
        for dgrids in grids:
            acc: GridPLD | None = None
            for g1, k in dgrids:
                g = g1.self_compose(k, tail=tail)
                acc = g if acc is None else acc.compose(g, tail=tail)
            out.append(acc)
    return Composed(upper=tuple(ups), lower=tuple(lows), h=h, seconds=time.perf_counter() - t0)


COARSENINGS = 4
"""How many times ``compose_within_limits`` may double h before giving up."""


def compose_within_limits(parts: Parts, *, h: float = DEFAULT_H, tail: float = DEFAULT_TAIL) -> Composed:
    """``compose``, doubling h (coarser grid, wider but still certified interval) when a
    composition step would exceed ``MAX_BINS``; the h actually used is ``Composed.h``."""
    for attempt in range(COARSENINGS + 1):
        try:
            return compose(parts, h=h * 2**attempt, tail=tail)
        except ParameterError as exc:
            if exc.field != "h" or attempt == COARSENINGS:
                raise
    raise AssertionError("unreachable")


def epsilon_interval(parts: Parts, *, delta: float, h: float = DEFAULT_H,
                     tail: float = DEFAULT_TAIL) -> Interval:
    """ε(δ) of the composition as a certified interval."""
    t0 = time.perf_counter()
    c = compose(parts, h=h, tail=tail)
    lo, up = c.epsilon(delta)
    return Interval(lower=lo if lo is not None else math.inf, upper=up, method="pld",
                    seconds=time.perf_counter() - t0, detail=f"h={h:g}")


def delta_interval(parts: Parts, *, epsilon: float, h: float = DEFAULT_H,
                   tail: float = DEFAULT_TAIL) -> Interval:
    """δ(ε) of the composition as a certified interval."""
    t0 = time.perf_counter()
    c = compose(parts, h=h, tail=tail)
    lo, up = c.delta(epsilon)
    return Interval(lower=lo, upper=up, method="pld", seconds=time.perf_counter() - t0,
                    detail=f"h={h:g}")
