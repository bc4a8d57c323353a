"""Plan a budget: the inverse questions of composition (issue 9; Steinke seed 001 Remark 15,
§4–§5, §6.7).

Given a total (ε, δ): the largest per-step ε0 for k releases (``composition.max_eps0``), the
largest common factor of a mix of levels (``composition.max_factor``), the largest number of
releases (``composition.max_k``), each for every method of ``dpviz.composition.METHODS``; the
smallest noise of a registered mechanism for k releases, Poisson-subsampled or not
(``noise.smallest_noise``, ``noise.largest_steps``); the largest per-database ε0 in the
generalized composition experiment (``gce.max_eps0``). Each answer is a :class:`Plan` holding the
forward :class:`~dpviz.guarantee.Guarantee` that certifies it. Math only: no plotting, no UI.
"""

from __future__ import annotations

from dpviz.planner.result import Plan

__all__ = ["Plan"]
