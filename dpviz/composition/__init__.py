"""Classic composition of (ε, δ)-DP mechanisms: basic, advanced, KOV closed form, optimal.

Each method module offers ``epsilon_for_delta(levels, delta=…)`` and
``delta_for_epsilon(levels, epsilon=…)`` returning a :class:`~dpviz.Guarantee`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from dpviz.budget import Budget
from dpviz.composition import advanced, basic, kov, optimal
from dpviz.composition.levels import Level, Levels, as_levels, homogeneous, parse_levels
from dpviz.guarantee import Guarantee


@dataclass(frozen=True)
class Method:
    """A composition theorem as shown to users. ``budgeted`` methods take a ``budget``
    (``dpviz.budget``); the closed forms cost nothing and ignore it."""

    key: str
    label: str
    module: ModuleType
    budgeted: bool = False

    def epsilon_for_delta(self, levels: Levels, *, delta: float, budget: Budget | None = None) -> Guarantee:
        if self.budgeted:
            return self.module.epsilon_for_delta(levels, delta=delta, budget=budget)
        return self.module.epsilon_for_delta(levels, delta=delta)

    def delta_for_epsilon(self, levels: Levels, *, epsilon: float, budget: Budget | None = None) -> Guarantee:
        if self.budgeted:
            return self.module.delta_for_epsilon(levels, epsilon=epsilon, budget=budget)
        return self.module.delta_for_epsilon(levels, epsilon=epsilon)


METHODS: dict[str, Method] = {
    "basic": Method("basic", "Basic", basic),
    "advanced": Method("advanced", "Advanced (DRV)", advanced),
    "kov": Method("kov", "KOV Thm 3.4/3.5", kov),
    "optimal": Method("optimal", "Optimal (KOV Thm 3.3)", optimal, budgeted=True),
}

__all__ = ["METHODS", "Level", "Levels", "Method", "as_levels", "homogeneous", "parse_levels"]
