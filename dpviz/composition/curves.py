"""Series for the composition-curves view: ε against k, δ against ε, and a value table.

Pure data (numpy arrays, NaN where a method gives no value); the figure builders
only draw them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpviz.composition import METHODS
from dpviz.composition.levels import Levels, homogeneous
from dpviz.guarantee import Guarantee


@dataclass(frozen=True)
class Series:
    """y against x for each method key; NaN where the method is infeasible."""

    x: NDArray[np.float64]
    y: dict[str, NDArray[np.float64]]


def k_grid(k_max: int, *, points: int = 60, log: bool = True) -> NDArray[np.int64]:
    """Distinct integer k from 1 to k_max, log- or linearly spaced."""
    raw = np.geomspace(1, k_max, points) if log and k_max > 1 else np.linspace(1, k_max, points)
    return np.unique(np.round(raw).astype(np.int64))


def _value(g: Guarantee, attr: str) -> float:
    v = getattr(g, attr)
    return float(v) if g.feasible and v is not None else float("nan")


def epsilon_vs_k(*, eps0: float, delta0: float, delta: float, ks: Iterable[int],
                 methods: Sequence[str] = tuple(METHODS)) -> Series:
    """ε at total δ for each k (homogeneous (ε0, δ0))."""
    ks = np.asarray(list(ks), dtype=np.int64)
    out = {m: np.empty(ks.size) for m in methods}
    for i, k in enumerate(ks):
        levels = homogeneous(k=int(k), eps0=eps0, delta0=delta0)
        for m in methods:
            out[m][i] = _value(METHODS[m].epsilon_for_delta(levels, delta=delta), "epsilon")
    return Series(x=ks.astype(float), y=out)


def delta_vs_epsilon(levels: Levels, *, epsilons: Iterable[float],
                     methods: Sequence[str] = tuple(METHODS)) -> Series:
    """δ at each total ε for a fixed composition."""
    eps = np.asarray(list(epsilons), dtype=float)
    out = {m: np.array([_value(METHODS[m].delta_for_epsilon(levels, epsilon=float(e)), "delta")
                        for e in eps]) for m in methods}
    return Series(x=eps, y=out)


def comparison(levels: Levels, *, delta: float) -> dict[str, Guarantee]:
    """Every method's ε at total δ (the value table)."""
    return {m: METHODS[m].epsilon_for_delta(levels, delta=delta) for m in METHODS}
