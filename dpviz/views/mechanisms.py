"""The mechanisms view: data and figures for ``pages/4_Mechanisms.py`` (no Streamlit).

The page's inputs are ``Param`` specs whose keys are the CLI flags of ``python -m dpviz mechanism``
(and the URL keys): the mechanism's own parameters come from the registry
(``dpviz.mechanisms.registry``), then ``k``, ``sampling_rate``, ``neighbouring`` and the target,
``delta`` (ε at δ) or ``epsilon`` (δ at ε).

- ``quick`` answers with the cheap routes (closed form, pure kε0, Rényi DP, generic optimum): the
  first sound answer, in milliseconds;
- ``build`` adds the PLD grid and privacy buckets, within the page's budget, and the figures: the
  loss histogram, δ(ε) with its certified band, the trade-off region against the generic optimal
  region for the same per-step (ε0, δ0), ε against k, and the routes' table with timings.

Every route answers with a ``dpviz.guarantee.Guarantee``; ``best`` picks the smallest sound upper
bound and the largest certified lower bound, and names the routes that gave them.

This module holds the page's inputs, ``build`` and the ``ViewSpec``; the routes are run by
``dpviz.views.mechanism_routes``, the figures drawn by ``dpviz.views.mechanism_figures`` and the
heterogeneous runs handled by ``dpviz.views.mechanism_mix``, whose names are importable from here too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache, partial
from types import MappingProxyType
from typing import Any

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost
from dpviz.figures.mechanisms import ROUTE_LABELS
from dpviz.guarantee import Guarantee
from dpviz.mechanisms import registry
from dpviz.params import BATCH_SIZE, DATASET_SIZE, SAMPLING, Param, check_flag, count_param, migrate
from dpviz.params import SAMPLING_RATE as RATE
from dpviz.validation import ParameterError, check_delta, check_epsilon
from dpviz.views import View, ViewSpec
from dpviz.views.mechanism_figures import figures, k_values
from dpviz.views.mechanism_mix import (
    MAX_MIX_ROWS,
    MIX,
    MIX_COLUMNS,
    heterogeneous,
    mix_entries,
    mix_parts,
    mix_rows,
    mix_spec,
    mix_view,
)
from dpviz.views.mechanism_routes import (
    BUCKETS_SHARE,
    PAGE_BUCKETS_N,
    PLD_SHARE,
    QUICK,
    answer_of,
    best,
    headline,
    quick,
    refine,
    refine_cost,
)

__all__ = ["BUCKETS_SHARE", "MAX_MIX_ROWS", "MIX", "MIX_COLUMNS", "PAGE_BUCKETS_N", "PLD_SHARE", "QUICK",
           "ROUTE_LABELS", "SPEC", "answer_of", "best", "build", "figures", "headline", "heterogeneous",
           "k_values", "make_mechanism", "mix_entries", "mix_parts", "mix_rows", "mix_spec", "mix_view",
           "quick", "refine", "refine_cost"]

KINDS = {cls.title: key for key, cls in registry.MECHANISMS.items()}
"""Menu title → registry key (the CLI subcommand and the URL value)."""


def _kind(value: object) -> str:
    text = str(value).strip().lower()
    for title, key in KINDS.items():
        if text in (title.lower(), key):
            return key
    raise ParameterError("mechanism", value, "one of " + ", ".join(KINDS.values()))


def _neighbouring(value: object) -> str:
    text = str(value).strip().lower()
    if text not in registry.NEIGHBOURING:
        raise ParameterError("neighbouring", value, " or ".join(registry.NEIGHBOURING))
    return text


def _solve(value: object) -> str:
    text = str(value).strip().lower()
    if text not in SOLVE_OPTIONS:
        raise ParameterError("answer", value, " or ".join(SOLVE_OPTIONS))
    return text


SOLVE_OPTIONS = {"epsilon": "ε at a total δ", "delta": "δ at a total ε"}
"""The two directions (``--delta`` / ``--epsilon`` on the CLI)."""

MECHANISM = Param("mechanism", "Mechanism", "gaussian", _kind, ", ".join(KINDS.values()) + ".")
K = count_param("k (compositions)", 1000, maximum=100_000, what="composed runs")
SAMPLING_RATE = replace(RATE, default=0.01)
NEIGHBOURING = Param("neighbouring", "neighbouring relation", "add-remove", _neighbouring,
                     "add-remove (one record more or less) or replace-one (one record changed), "
                     "Steinke §6.2.")
SOLVE = Param("solve", "answer", "epsilon", _solve, "ε at a total δ, or δ at a total ε.")
DELTA = Param("delta", "target total δ", 1e-5, partial(check_delta, field="delta"),
              "Total δ at which ε is reported, in [0, 1); 0 only for pure mechanisms.")
EPSILON = Param("epsilon", "target total ε", 1.0, partial(check_epsilon, field="epsilon"),
                "Total ε at which δ is reported, in [0, 100].")
COMPARE = Param("compare", "compare with privacy buckets", False, partial(check_flag, field="compare"),
                "Also run privacy buckets (Meiser-Mohammadi) for ε at δ: slower, and at most a lower bound "
                "where squaring has coarsened the buckets.")
HDELTA = Param("het_delta", "target total δ (heterogeneous)", 1e-4,
               partial(check_delta, field="target δ (heterogeneous)", positive=True))

LEGACY_KEYS = {"mech_k": "k", "mech_delta": "delta", "rate": "sampling_rate", "mech_eps0": "eps0"}
"""URL keys of earlier versions of the page → today's (the CLI flags): old shared links still open."""


def legacy_query(query: Mapping[str, str]) -> dict[str, str]:
    """The URL query with earlier keys renamed (a key given both ways keeps today's value), earlier
    values in today's words (``sampling_rate=0`` was no subsampling: 1) and the mechanism named by
    its registry key."""
    out = {k: v for k, v in query.items() if k not in LEGACY_KEYS}
    for old, new in LEGACY_KEYS.items():
        if old in query and new not in query:
            out[new] = query[old]
    if "mechanism" in out:
        with contextlib.suppress(ParameterError):  # the page names the field
            out["mechanism"] = _kind(out["mechanism"])
    return migrate(out)


def mechanism_params(key: str) -> tuple[Param, ...]:
    """The registered mechanism's own parameters (keys = CLI flags)."""
    return registry.mechanism_class(key).params


def make_mechanism(key: str, values: Mapping[str, Any]) -> Any:
    """The mechanism ``key`` with its parameters taken from ``values`` (page or CLI keys),
    subsampled at ``sampling_rate`` (None: not subsampled) under ``neighbouring``, or, with
    ``sampling`` = "fixed-size", on a batch of ``batch_size`` of ``dataset_size`` records drawn
    without replacement (replace-one neighbours, whatever ``neighbouring`` says)."""
    own = {p.key: values[p.key] for p in mechanism_params(key) if p.key in values}
    if values.get("sampling", SAMPLING.default) == "fixed-size":
        batch = (values.get("batch_size", BATCH_SIZE.default),
                 values.get("dataset_size", DATASET_SIZE.default))
        return registry.make_sampled(key, sampling_rate=None, neighbouring="replace-one", batch=batch,
                                     params=own)
    return registry.make(key, sampling_rate=values.get("sampling_rate"),
                         neighbouring=values.get("neighbouring", "add-remove"), **own)



def build(mech: Any, *, k: int, delta: float | None = None, epsilon: float | None = None,
          compare: bool = False, budget: Budget = budgets.PAGE) -> View:
    """``refine`` and ``figures`` in one view (the headless figure CLI, tests); ``budget`` (default:
    the page's) bounds each route: a route over its share is a row that says why, the δ(ε) grids
    are thinned."""
    r = refine(mech, k=k, delta=delta, epsilon=epsilon, compare=compare, budget=budget)
    f = figures(mech, k=k, delta=delta, epsilon=epsilon, h=r.summary["h"], answer=answer_of(r),
                budget=budget)
    return View(figures=f.figures, csv={**r.csv, **f.csv}, payload=r.payload, summary=r.summary,
                tables=r.tables)



Values = tuple[tuple[str, Any], ...]
"""A mechanism's page values as sorted (key, value) pairs: hashable, so a cache can key on them."""

QUICK_KEPT = 32
"""``quick_for`` answers kept for ``refine_for`` (a few KB each): the page asks for the refinement
right after the first answer, another session's change may come between."""


def as_values(values: Mapping[str, Any]) -> Values:
    return tuple(sorted(values.items()))


def quick_for(kind: str, values: Values, *, k: int, delta: float | None = None,
              epsilon: float | None = None) -> dict[str, Guarantee]:
    """``quick`` for the mechanism ``kind`` with ``values`` (``as_values``): cacheable arguments.
    The answers are kept (``QUICK_KEPT``) for ``refine_for`` with the same arguments."""
    try:
        hash(values)
    except TypeError:  # a value that cannot be a key (never one of the page's): not kept
        return quick(make_mechanism(kind, dict(values)), k=k, delta=delta, epsilon=epsilon)
    return dict(_kept_quick(kind, values, k, delta, epsilon))


@lru_cache(maxsize=QUICK_KEPT)
def _kept_quick(kind: str, values: Values, k: int, delta: float | None,
                epsilon: float | None) -> Mapping[str, Guarantee]:
    return MappingProxyType(quick(make_mechanism(kind, dict(values)), k=k, delta=delta, epsilon=epsilon))


def refine_for(kind: str, values: Values, *, k: int, delta: float | None = None, epsilon: float | None = None,
               **options: Any) -> View:
    """``refine`` with cacheable arguments (``as_values``); the cheap routes' answers are
    ``quick_for``'s (the page has just computed them for its first answer), not computed again."""
    return refine(make_mechanism(kind, dict(values)), k=k, delta=delta, epsilon=epsilon,
                  first=quick_for(kind, values, k=k, delta=delta, epsilon=epsilon), **options)


def refine_cost_for(kind: str, values: Values, *, k: int, first: Mapping[str, Guarantee],
                    compare: bool = False, **target: Any) -> Cost:
    """``refine_cost`` with the page's arguments: the refinement's estimated time, shown at once
    when it is above a second (``dpviz.budget.notice``)."""
    return refine_cost(make_mechanism(kind, dict(values)), k=k, first=first, compare=compare, **target)


def figures_for(kind: str, values: Values, **target: Any) -> View:
    """``figures`` with cacheable arguments (``as_values``)."""
    return figures(make_mechanism(kind, dict(values)), **target)



def build_view(*, mechanism: str, k: int, sampling_rate: float | None, neighbouring: str = "add-remove",
               sampling: str = "Poisson", batch_size: int = 256, dataset_size: int = 60_000,
               solve: str = "epsilon", delta: float = 1e-5, epsilon: float = 1.0, compare: bool = False,
               budget: Budget = budgets.PAGE, **own: Any) -> View:
    """``ViewSpec`` entry point (headless ``python -m dpviz figure mechanisms``); ``own`` holds the
    mechanism's parameters (absent ones take the registry's defaults)."""
    mech = make_mechanism(mechanism, {**own, "sampling_rate": sampling_rate, "neighbouring": neighbouring,
                                      "sampling": sampling, "batch_size": batch_size,
                                      "dataset_size": dataset_size})
    if solve == "delta":
        return build(mech, k=k, epsilon=epsilon, budget=budget)
    return build(mech, k=k, delta=delta, compare=compare, budget=budget)


def _own_params() -> tuple[Param, ...]:
    """Every registered mechanism's parameters, each key once (the first spec of a key wins)."""
    seen: dict[str, Param] = {}
    for cls in registry.MECHANISMS.values():
        for p in cls.params:
            seen.setdefault(p.key, p)
    return tuple(seen.values())


SPEC = ViewSpec(name="mechanisms", title="Mechanisms", aliases=LEGACY_KEYS,
                params=(MECHANISM, *_own_params(), K, SAMPLING, SAMPLING_RATE, BATCH_SIZE, DATASET_SIZE,
                        NEIGHBOURING, SOLVE, DELTA, EPSILON, COMPARE),
                build=build_view)
"""For ``dpviz.views.catalog.registry``."""
