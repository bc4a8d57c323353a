"""Classic composition of (ε, δ)-DP mechanisms: basic, advanced, KOV closed form, zCDP, optimal.

Each method module offers ``epsilon_for_delta(levels, delta=…)`` and
``delta_for_epsilon(levels, epsilon=…)`` returning a :class:`~dpviz.guarantee.Guarantee`, and
``delta_curve(levels, epsilons)`` returning a :class:`~dpviz.guarantee.DeltaCurve`. The levels
are validated once, where they are made (``Level``, ``as_levels``), not again by each method.
Formulas: docs/MATH.md §3 (homogeneous), §4 (levels) and §11 (zCDP).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

from numpy.typing import ArrayLike

from dpviz.budget import Budget
from dpviz.composition import advanced, basic, kov, kov_simplified, optimal, zcdp
from dpviz.composition.levels import Level, Levels, as_levels, homogeneous, parse_levels
from dpviz.guarantee import DeltaCurve, Guarantee


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

    def epsilons_for_delta(self, many: Sequence[Levels], *, delta: float,
                           budget: Budget | None = None) -> list[Guarantee]:
        """:meth:`epsilon_for_delta` of each composition of ``many``: solved side by side where the
        module can (the optimum's searches, ``optimal.epsilons_for_delta``), the same numbers."""
        together = getattr(self.module, "epsilons_for_delta", None)
        if together is not None:
            return list(together(many, delta=delta, budget=budget))
        return [self.epsilon_for_delta(levels, delta=delta, budget=budget) for levels in many]

    def delta_for_epsilon(self, levels: Levels, *, epsilon: float, budget: Budget | None = None) -> Guarantee:
        if self.budgeted:
            return self.module.delta_for_epsilon(levels, epsilon=epsilon, budget=budget)
        return self.module.delta_for_epsilon(levels, epsilon=epsilon)

    def delta_curve(self, levels: Levels, epsilons: ArrayLike, *, budget: Budget | None = None) -> DeltaCurve:
        """δ at every ε of ``epsilons`` (``dpviz.guarantee.DeltaCurve``), equal to
        :meth:`delta_for_epsilon` point by point."""
        if self.budgeted:
            return self.module.delta_curve(levels, epsilons, budget=budget)
        return self.module.delta_curve(levels, epsilons)


METHODS: dict[str, Method] = {
    "basic": Method("basic", "Basic", basic),
    "advanced": Method("advanced", "Advanced (DRV)", advanced),
    "kov": Method("kov", "KOV Thm 3.4/3.5", kov),
    "kov_simplified": Method("kov_simplified", "KOV Thm 3.4, simplified", kov_simplified),
    "zcdp": Method("zcdp", "zCDP (Steinke Thm 18/22)", zcdp),
    "optimal": Method("optimal", "Optimal (KOV Thm 3.3)", optimal, budgeted=True),
}

__all__ = ["METHODS", "Level", "Levels", "Method", "as_levels", "homogeneous", "parse_levels"]
