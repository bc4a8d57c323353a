"""Every view by its CLI name (``python -m dpviz figure VIEW``): the pages' views in one mapping.

A module of its own, not the package's ``__init__``: the views import ``View`` and ``ViewSpec``
from the package, so a registry there could only import them lazily, hiding the cycle.
"""

from __future__ import annotations

from dpviz.views import ViewSpec, attack, curves, database_priors, mechanisms, planner, regions


def registry() -> dict[str, ViewSpec]:
    """All views by CLI name."""
    return {s.name: s for s in (regions.SPEC, curves.SPEC, database_priors.SPEC, mechanisms.SPEC,
                                planner.SPEC, attack.SPEC)}
