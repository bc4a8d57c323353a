"""Privacy regions implied by each composition method (KOV §3, Figs. 2-3).

- basic: R(Σε_i, Σδ_i).
- optimal: the trade-off curve of the composed canonical pairs, which equals the
  intersection of the KOV Thm 3.3 regions ((k − 2i)ε0, δ_(i)) (exact vertices).
- every method whose module has ``epsilon_at_slack(levels, slack=…)`` and
  ``total_delta(levels, slack)`` (advanced, KOV Thm 3.4-3.5, zCDP): a valid (ε(s), δ(s)) for
  every slack s, so the theorem proves ∩_s R(ε(s), δ(s)); drawn within 1e-4 by
  :func:`dpviz.regions.slack.slack_region` (docs/MATH.md §13). A module may also offer
  ``epsilon_at_slacks(levels, slacks)`` and ``total_deltas(levels, slacks)`` (numpy, the same
  values) for speed.
"""

from __future__ import annotations

from functools import partial
from types import ModuleType

from dpviz import budget as budgets
from dpviz.budget import Budget
from dpviz.composition import METHODS, optimal
from dpviz.composition.levels import Levels, sum_delta, sum_epsilon
from dpviz.regions.boundary import Boundary, intersection_boundary
from dpviz.regions.pairs import atoms_boundary
from dpviz.regions.slack import TOLERANCE, SlackRegion, pointwise, slack_region


def slack_module(method: str) -> ModuleType | None:
    """The method's module when it states its guarantee per slack (the two functions above)."""
    m = METHODS.get(method)
    if m is None or method in ("basic", "optimal"):
        return None
    module = m.module
    if callable(getattr(module, "epsilon_at_slack", None)) and callable(getattr(module, "total_delta", None)):
        return module
    return None


def region_methods() -> tuple[str, ...]:
    """Every method with a region: basic, the slack methods in METHODS order, optimal last."""
    return ("basic", *(m for m in METHODS if slack_module(m) is not None), "optimal")


def method_slack_region(method: str, levels: Levels, *, tolerance: float = TOLERANCE) -> SlackRegion:
    """The drawn intersection over slacks of ``method``, with its proved error bound."""
    module = slack_module(method)
    if module is None:
        raise ValueError(f"method {method!r} has no per-slack guarantee")
    vectorised = getattr(module, "epsilon_at_slacks", None)
    epsilons = (partial(vectorised, levels) if callable(vectorised)
                else pointwise(partial(_epsilon_at, module, levels)))
    many = getattr(module, "total_deltas", None)
    deltas = partial(many, levels) if callable(many) else pointwise(partial(module.total_delta, levels))
    return slack_region(epsilons, deltas, tolerance=tolerance)


def _epsilon_at(module: ModuleType, levels: Levels, slack: float) -> float:
    return float(module.epsilon_at_slack(levels, slack=slack))


def method_region(method: str, levels: Levels, *, budget: Budget | None = None) -> Boundary:
    """Lower boundary of the region that ``method`` proves for the composition. The optimal
    region raises :class:`~dpviz.budget.OverBudget` when its atoms cost more than ``budget``
    (``None``: the CLI default); the other regions cost little."""
    if method == "basic":
        return intersection_boundary([sum_epsilon(levels)], [min(sum_delta(levels), 1.0)])
    if method == "optimal":
        budgets.check(optimal.cost(levels), budget)
        return atoms_boundary(optimal.loss_atoms(levels))
    if slack_module(method) is None:
        raise ValueError(f"unknown method {method!r}")
    return method_slack_region(method, levels).boundary
