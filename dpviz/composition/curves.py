"""Series for the composition-curves view: ε against k, δ against ε, and a value table.

Pure data (numpy arrays, NaN where a method gives no value); the figure builders
only draw them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpviz.budget import Budget
from dpviz.composition import METHODS
from dpviz.composition.levels import Levels, homogeneous
from dpviz.guarantee import Guarantee, Kind


@dataclass(frozen=True)
class Series:
    """y against x for each method key; NaN where the method is infeasible."""

    x: NDArray[np.float64]
    y: dict[str, NDArray[np.float64]]

    def columns(self, x: str, prefix: str,
                keys: Iterable[str] | None = None) -> dict[str, NDArray[np.float64]]:
        """The series as columns (its one serialised shape: the CSV and the JSON payload): ``x`` and
        ``prefix + key`` for each method key (``keys``: those, in that order; default all)."""
        return {x: self.x, **{f"{prefix}{m}": self.y[m] for m in (self.y if keys is None else keys)}}


def k_grid(k_max: int, *, points: int = 60, log: bool = True) -> NDArray[np.int64]:
    """Distinct integer k from 1 to k_max, log- or linearly spaced."""
    raw = np.geomspace(1, k_max, points) if log and k_max > 1 else np.linspace(1, k_max, points)
    return np.unique(np.round(raw).astype(np.int64))


def _value(g: Guarantee, attr: str) -> float:
    v = getattr(g, attr)
    return float(v) if g.feasible and v is not None else float("nan")


def _plotted(g: Guarantee, attr: str, method: str) -> float:
    """A curve point: the method's own value only (a closed form standing in for an
    over-budget optimum is not drawn as the optimum)."""
    if method == "optimal" and g.kind is not Kind.EXACT:
        return float("nan")
    return _value(g, attr)


def epsilon_vs_k(*, eps0: float, delta0: float, delta: float, ks: Iterable[int],
                 methods: Sequence[str] = tuple(METHODS), budget: Budget | None = None) -> Series:
    """ε at total δ for each k (homogeneous (ε0, δ0)); ``budget`` applies to each exact point."""
    ks = np.asarray(list(ks), dtype=np.int64)
    many = [homogeneous(k=int(k), eps0=eps0, delta0=delta0) for k in ks]
    out = {m: np.array([_plotted(g, "epsilon", m)
                        for g in METHODS[m].epsilons_for_delta(many, delta=delta, budget=budget)])
           for m in methods}
    return Series(x=ks.astype(float), y=out)


def delta_vs_epsilon(levels: Levels, *, epsilons: Iterable[float],
                     methods: Sequence[str] = tuple(METHODS), budget: Budget | None = None) -> Series:
    """δ at each total ε for a fixed composition."""
    eps = np.asarray(list(epsilons), dtype=float)
    out = {}
    for m in methods:
        curve = METHODS[m].delta_curve(levels, eps, budget=budget)
        stand_in = m == "optimal" and curve.kind is not Kind.EXACT  # not drawn as the optimum
        out[m] = np.full(eps.size, np.nan) if stand_in else curve.upper
    return Series(x=eps, y=out)


def comparison(levels: Levels, *, delta: float, budget: Budget | None = None) -> dict[str, Guarantee]:
    """Every method's ε at total δ (the value table)."""
    return {m: METHODS[m].epsilon_for_delta(levels, delta=delta, budget=budget) for m in METHODS}
