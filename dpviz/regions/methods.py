"""Privacy regions implied by each composition method (KOV §3, Figs. 2-3).

- basic: R(kε0, kδ0).
- advanced / KOV Thm 3.4-3.5: each slack δ' gives a valid (ε(δ'), δ(δ'))
  guarantee, so the intersection of R over a sweep of δ' is itself a valid region
  (and finer sweeps only shrink it towards the theorem's full region).
- optimal: the trade-off curve of the composed canonical pairs, which equals the
  intersection of the KOV Thm 3.3 regions ((k − 2i)ε0, δ_(i)) (exact vertices).
"""

from __future__ import annotations

import numpy as np

from dpviz import budget as budgets
from dpviz.budget import Budget
from dpviz.composition import advanced, kov, optimal
from dpviz.composition.levels import Levels, sum_delta, sum_epsilon
from dpviz.regions.boundary import Boundary, intersection_boundary
from dpviz.regions.pairs import atoms_boundary

SLACK_SWEEP = 400
"""Slack values δ' swept (log-spaced) for the advanced and KOV-3.4 regions."""


def method_region(method: str, levels: Levels, *, budget: Budget | None = None) -> Boundary:
    """Lower boundary of the region that ``method`` proves for the composition. The optimal
    region raises :class:`~dpviz.budget.OverBudget` when its atoms cost more than ``budget``
    (``None``: the CLI default); the closed forms cost little."""
    if method == "basic":
        return intersection_boundary([sum_epsilon(levels)], [min(sum_delta(levels), 1.0)])
    if method == "optimal":
        budgets.check(optimal.cost(levels), budget)
        return atoms_boundary(optimal.loss_atoms(levels))
    slacks = np.logspace(-300, 0, SLACK_SWEEP, endpoint=False)  # δ' ∈ [1e-300, 1)
    if method == "advanced":
        base = sum_delta(levels)
        eps = [advanced.epsilon_at_slack(levels, slack=s) for s in slacks]
        dlt = np.minimum(base + slacks, 1.0)
    elif method == "kov":
        eps = [kov.epsilon_at_slack(levels, slack=s) for s in slacks]
        dlt = np.array([kov.total_delta(levels, float(s)) for s in slacks])
    else:
        raise ValueError(f"unknown method {method!r}")
    keep = dlt < 1.0
    if not keep.any():
        return intersection_boundary([0.0], [1.0])
    return intersection_boundary(np.asarray(eps)[keep], dlt[keep])
