"""Composition in two stages: m steps on a fine grid, then the m-fold law on a coarser one
(docs/MATH.md §17.10).

A grid's discretisation error is second order in its width and paid once per step it is composed
over (§17.9: about k·c·h² in ε). Composing k steps at one width h pays it k times on a window as wide
as the k-fold law, N ≈ span/h bins. In two stages the single step is composed m times at h₁, that
m-fold grid is discretised again, as a law of atoms, at h₂ = r·h₁ (connect-the-dots for the upper
grid, the post-processing for the lower, ``dpviz.pld.discretize``), and that is composed k/m times:
the error is k·c·h₁² + (k/m)·c·h₂², so h₂ may be about √m times h₁ and the large transform √m times
shorter, while the first one spans only the m-fold law.

Soundness (§17.10). The upper m-fold grid carries a round-off bound tilted at θ; connect-the-dots is
linear in the masses and moves each by at most h₂, so the bound grows by e^{θh₂} and the second
stage carries it (``power.compose_power``, inherited error). The lower m-fold grid is lowered entry by
entry by its own error bound (``entrywise``): a sub-measure of the exact composition, so its
post-processing is a lower bound with no round-off to carry. Both stages tilt at the same θ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from dpviz.pld import discretize
from dpviz.pld.grid import GridPLD
from dpviz.pld.law import LossLaw
from dpviz.pld.power import compose_power


@dataclass(frozen=True)
class Stages:
    """m steps composed at the fine width h₁ (the composition's h), then at ``ratio``·h₁."""

    m: int
    ratio: int

    def applies(self, k: int) -> bool:
        """At least two first-stage grids are composed in the second stage, and the second width is
        at least twice the first."""
        return self.ratio >= 2 and self.m >= 2 and k // self.m >= 2


def near_divisor(k: int, m: int) -> int:
    """The count in [⌈2m/3⌉, m] leaving the smallest remainder k mod count (the largest such count): the
    remainder's steps are composed at the coarse width (``compose_staged``), where a step costs
    more width than in the first stage."""
    counts = np.arange(max(2, -(-2 * m // 3)), m + 1)
    rem = k % counts
    return int(counts[np.flatnonzero(rem == rem.min())[-1]])


def as_law(g: GridPLD) -> LossLaw:
    """A composed grid as a law of atoms (P-mass at each grid loss, Q = P·e^{−L}), to be discretised
    again; its mass at +∞ kept."""
    nz = np.flatnonzero(g.mass)
    loss = g.losses[nz]
    p = g.mass[nz]
    return LossLaw.from_atoms("composed grid", loss, p, p * np.exp(-loss), p_inf=g.p_inf)


def regridded(g: GridPLD, ratio: int) -> GridPLD:
    """``g`` discretised again at ``ratio``·h on points that are every ``ratio``-th point of its own
    grid: connect-the-dots for an upper grid, its round-off bound grown by e^{θh₂} (the split is linear
    in the masses and moves each by less than h₂, §17.10); post-processing for a lower grid (which must
    have no round-off bound: ``compose_power(entrywise=True)``)."""
    h2 = g.h * ratio
    offset = g.offset - math.floor(g.offset / h2) * h2
    law = as_law(g)  # every atom kept (tail 0): the composition's tail budget is spent already
    if g.pessimistic:
        out = discretize.pessimistic(law, h=h2, tail=0.0, offset=offset)
        # the atoms' largest loss is no bound where masses were zeroed as round-off (their error is in
        # err): ``g.top`` is, and the split moves mass up by less than h₂
        top = g.top + h2 if math.isfinite(g.top) else math.inf
        grown = g.err * math.exp(g.tilt * h2) * (1.0 + 1e-12) if g.err else 0.0
        return replace(out, err=grown, tilt=g.tilt if g.err else out.tilt, top=max(out.top, top), _cache={})
    if g.err:
        raise ValueError("a lower grid is discretised again only without a round-off bound")
    return discretize.optimistic(law, h=h2, tail=0.0, offset=offset)


def first_stage(single: GridPLD, steps: int, *, theta: float, tail: float) -> GridPLD:
    """``steps`` steps of ``single`` composed at its width and tilt θ (lower grids entry by entry)."""
    return compose_power([(single, steps)], tail=tail, theta=theta, entrywise=not single.pessimistic)


def compose_staged(single: GridPLD, coarse_single: GridPLD | None, k: int, stages: Stages, *,
                   theta: float, tail: float) -> GridPLD:
    """k steps of ``single`` in two stages (module docstring): ⌊k/m⌋ copies of the m-fold grid, and the
    remaining k mod m steps as ``coarse_single`` (the same law discretised at the second width). The
    first stage moves at most tail/(2⌊k/m⌋) (its grid is composed that many times), the second tail/2."""
    copies, rest = divmod(k, stages.m)
    first = first_stage(single, stages.m, theta=theta, tail=tail / (2 * copies))
    parts = [(regridded(first, stages.ratio), copies)]
    if rest:
        if coarse_single is None:
            raise ValueError(f"{rest} steps remain after {copies}×{stages.m}: a single step at the "
                             "second width is needed")
        parts.append((coarse_single, rest))
    return compose_power(parts, tail=tail / 2.0, theta=theta)
