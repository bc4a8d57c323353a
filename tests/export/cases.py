"""Every view the app can show, by case: regions, curves, each Database-priors preset and each
mechanism kind, at the page defaults otherwise. Views are built once per test process."""

from __future__ import annotations

from functools import cache
from typing import Any

from dpviz.gce.questions import PRESETS
from dpviz.views import View
from dpviz.views.catalog import registry
from dpviz.views.mechanisms import KINDS

CASES: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("regions", ()),
    ("curves", ()),
    *(("priors", (("preset", key),)) for key in PRESETS),
    *(("mechanisms", (("mechanism", kind),)) for kind in KINDS.values()),
)
"""(view name, overridden parameters) for every view and every preset / mechanism kind."""


def case_id(case: tuple[str, tuple[tuple[str, str], ...]]) -> str:
    name, over = case
    return "-".join([name, *(v for _, v in over)])


def values(name: str, over: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    """The validated parameters of a case (CLI spelling of the overrides)."""
    spec = registry()[name]
    out = spec.defaults()
    given = dict(over)
    out.update({p.key: p.check(given[p.key]) for p in spec.params if p.key in given})
    return out


@cache
def view(name: str, over: tuple[tuple[str, str], ...] = ()) -> View:
    return registry()[name].build(**values(name, over))
