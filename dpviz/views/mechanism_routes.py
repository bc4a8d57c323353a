"""The Mechanisms page's routes: which run, in what order, within which share of the budget.

``quick`` answers with the cheap routes (closed form, pure kε0, Rényi DP, generic optimum): the first
sound answer, in milliseconds; ``refine`` adds the PLD grid and privacy buckets within the page's
budget and builds the routes' table, payload and summary. Every route answers with a
``dpviz.guarantee.Guarantee``; ``best`` picks the smallest sound upper bound and the largest certified
lower bound (``dpviz.mechanisms.headline``, the rule the CLI uses) and names the routes that gave them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost
from dpviz.figures.mechanisms import ROUTE_LABELS, route_table
from dpviz.figures.tables import format_number, table_csv, table_rows
from dpviz.guarantee import Guarantee, Kind, Status
from dpviz.mechanisms import routes
from dpviz.pld.refine import REFINE_GRIDS, finest_grid_seconds
from dpviz.results import intervals_json
from dpviz.validation import ParameterError
from dpviz.views import View

PAGE_BUCKETS_N = 10_000
"""n for the buckets column on the page (2n + 1 = 20,001 buckets)."""

BUCKETS_SHARE, PLD_SHARE = 0.2, 0.5
"""Shares of the view's budget: privacy buckets and the PLD (all k on one grid); the figures take
``dpviz.views.mechanism_figures.CURVE_SHARE``, the rest is cheap."""


def _timed(fn: Callable[[], Guarantee | None]) -> Guarantee | None:
    t0 = time.perf_counter()
    g = fn()
    if g is not None and g.seconds is None:
        g = Guarantee(**{**g.__dict__, "seconds": time.perf_counter() - t0})
    return g


QUICK = ("exact", "analytic", "pure", "rdp", "rdp_analytic", "zcdp", "generic")
"""The cheap routes of ``dpviz.mechanisms.routes`` (milliseconds), in table order; the PLD and
privacy buckets refine."""

OPTIONAL = ("pure", "rdp_analytic", "zcdp")
"""Cheap routes left out of the first answer where they do not apply (their answer is "not computed")."""

EXACT_SHARE = 0.1
"""The exact route's share of the page's budget in the first answer (0.2 s of estimated work): beyond
it the PLD's certified interval answers and the row says why (the command line computes it). Finite
laws of 3-4 outcomes, subsampled, at 2,000 steps took 1.3-2.2 s of a change here (issue 20)."""


def quick(mech: Any, *, k: int, delta: float | None = None, epsilon: float | None = None,
          budget: Budget = budgets.PAGE) -> dict[str, Guarantee]:
    """The cheap routes' answers (``QUICK``): the page shows them before the PLD refines. The exact
    route is left out where it does not apply (a continuous law, too many atoms), and says why where
    it is over its share of ``budget`` (``EXACT_SHARE``)."""
    parts = [(mech, k)]
    exact_budget = budget.share(EXACT_SHARE)  # beyond it the exact row says why
    out: dict[str, Guarantee] = {}
    for key in QUICK:
        if key == "exact":
            if isinstance(routes.exact_cost(parts), str):
                continue  # the route does not apply (a continuous law, too many atoms or outcomes)
            g = _timed(lambda: routes.exact(parts, delta=delta, epsilon=epsilon, budget=exact_budget))
        else:
            route = getattr(routes, key)
            g = _timed(lambda r=route: r(parts, delta=delta, epsilon=epsilon))  # type: ignore[misc]
            if g is not None and key in OPTIONAL and g.status is Status.NOT_COMPUTED:
                continue  # the route does not apply (an unbounded law, no closed form)
        if g is not None:
            out[key] = g
    return out



def _buckets(mech: Any, k: int, delta: float | None, budget: Budget) -> Guarantee | None:
    if delta is None or delta == 0:
        return None  # answers ε at δ > 0
    c = routes.buckets_cost(mech, k=k, n=PAGE_BUCKETS_N)
    if not budget.admits(c):
        return Guarantee.not_computed(source="privacy buckets (Meiser-Mohammadi)", delta=delta,
                                      reason=f"buckets {budget.reason(c)}")
    return routes.buckets([(mech, k)], delta=delta, n=PAGE_BUCKETS_N)



def best(results: Mapping[str, Guarantee]) -> dict[str, Any]:
    """The routes' headline (``dpviz.mechanisms.headline``, the rule the CLI uses) as the page's
    summary: upper and lower ends, each with its route, the note and the routes proving impossibility."""
    return routes.headline(dict(results)).summary()


def headline(summary: Mapping[str, Any], *, solve: str, refined: bool) -> str:
    """The page's headline (Markdown): the best sound upper bound and the best certified lower
    bound of the solved quantity, each with its route; before refinement, says it is refining."""
    q = "ε" if solve == "epsilon" else "δ"
    if summary["upper"] is None:
        text = f"No route gives a finite upper bound on {q} here (the table says why)."
    else:
        up, lo = format_number(summary["upper"]), format_number(summary["lower"], down=True)
        text = f"{q} ≤ **{up}** ({ROUTE_LABELS.get(summary['upper_route'])})"
        if summary["lower"] is not None and summary["lower"] >= summary["upper"]:  # exact
            text = f"{q} = **{up}** ({ROUTE_LABELS.get(summary['upper_route'])})"
        elif summary["lower"] is not None and summary["lower_route"] == summary["upper_route"]:
            text = f"{q} ∈ [**{lo}**, **{up}**] ({ROUTE_LABELS.get(summary['upper_route'])})"
        elif summary["lower"] is not None:
            text += (f"; {q} ≥ **{format_number(summary['lower'], down=True)}** "
                     f"({ROUTE_LABELS.get(summary['lower_route'])})")
        text += "."
    if summary.get("note"):
        text += f" Warning: {summary['note']}."
    if not refined:
        text += " First answer from the cheap routes; refining with the PLD grid and privacy buckets…"
    return text



def _guarded(source: str, run: Callable[[], Guarantee | None], delta: float | None,
             epsilon: float | None) -> Guarantee | None:
    """A refining route whose numerics fail on this input (an engine error, not the input's) is a
    row that says so: the other routes' sound answers stand, and nothing shows a traceback."""
    try:
        return run()
    except ParameterError:
        raise
    except (ArithmeticError, ValueError, MemoryError) as exc:
        return Guarantee.not_computed(source=source, delta=delta, epsilon=epsilon,
                                      solved="delta" if epsilon is not None else "epsilon",
                                      reason=f"the computation failed here ({type(exc).__name__}: {exc})")


def refine(mech: Any, *, k: int, delta: float | None = None, epsilon: float | None = None,
           compare: bool = False, budget: Budget = budgets.PAGE,
           first: Mapping[str, Guarantee] | None = None) -> View:
    """Every route's answer (the cheap ones, the PLD unless a route was exact, buckets with
    ``compare``: ε at δ > 0 only, the CLI's ``--compare``): the routes' table, the payload and the
    summary (``best``, the time, the refining routes, the PLD's grid width ``h``); no figures.
    ``first``: ``quick``'s answers for the same mechanism, k and target, when the caller has them
    (the page has shown them): not computed again. The exact route among them can take seconds
    (randomized response on 3 categories at q = 0.0125, 2,000 steps: 1.3 s, computed twice a change,
    before ``EXACT_SHARE``)."""
    t0 = time.perf_counter()
    solve = "delta" if epsilon is not None else "epsilon"
    results = dict(first) if first is not None else \
        quick(mech, k=k, delta=delta, epsilon=epsilon, budget=budget)
    if not any(g.kind is Kind.EXACT for g in results.values()):  # an exact answer needs no grid
        pld = _timed(lambda: _guarded("PLD grid", lambda: routes.pld(
            [(mech, k)], delta=delta, epsilon=epsilon, budget=budget.share(PLD_SHARE)), delta, epsilon))
        if pld is not None:
            results["pld"] = pld
    b = _guarded("privacy buckets", lambda: _buckets(mech, k, delta, budget.share(BUCKETS_SHARE)), delta,
                 epsilon) if solve == "epsilon" and compare else None
    if b is not None:
        results["buckets"] = b
    order = ["pld", *QUICK, "buckets"]
    results = {key: results[key] for key in order if key in results}
    headline = best(results)
    payload = {"view": "mechanisms", "mechanism": mech.key, "k": k, "solve": solve,
               "delta": delta, "epsilon": epsilon,
               "parameters": {"mechanism": mech.key, **mech.values, "k": k,
                              "sampling_rate": getattr(mech, "sampling_rate", None),
                              "neighbouring": getattr(mech, "neighbouring", "add-remove"),
                              "delta": delta, "epsilon": epsilon},
               "best": headline,
               "results": intervals_json(results)}
    summary = {**headline, "seconds": time.perf_counter() - t0, "h": _grid_width(results.get("pld")),
               "refined": [key for key in ("pld", "buckets") if key in results]}
    columns = route_table(solve)
    return View(figures={}, csv={"routes": table_csv(results, columns)}, payload=payload, summary=summary,
                tables={"comparison": table_rows(results, columns)})



def refine_cost(mech: Any, *, k: int, first: Mapping[str, Guarantee], delta: float | None = None,
                epsilon: float | None = None, compare: bool = False, budget: Budget = budgets.PAGE) -> Cost:
    """Estimated time of ``refine`` once ``quick`` has answered ``first`` (``dpviz.budget`` units),
    before it runs. The PLD grid (unless a quick route was exact): ``REFINE_GRIDS`` times the counted
    work of its finest regular grid (``dpviz.pld.refine.finest_grid_seconds``), each grid at most the
    PLD's share of the budget (the refinement stops there); privacy buckets
    (``routes.buckets_cost``) with ``compare`` at δ > 0 when their share admits them."""
    seconds, names = 0.0, []
    if not any(g.kind is Kind.EXACT for g in first.values()):
        share = budget.share(PLD_SHARE).seconds
        finest = finest_grid_seconds([(mech.law, k)], delta=delta, epsilon=epsilon)
        # no grid that fine fits (None): the route coarsens within its share
        seconds, names = REFINE_GRIDS * (share if finest is None else min(finest, share)), ["the PLD grid"]
    if compare and delta:
        b = routes.buckets_cost(mech, k=k, n=PAGE_BUCKETS_N)
        if budget.share(BUCKETS_SHARE).admits(b):
            seconds, names = seconds + b.seconds, [*names, "privacy buckets"]
    return Cost(seconds, what="Refining with " + " and ".join(names) if names else "")


def answer_of(refined: View) -> tuple[float | None, float | None] | None:
    """The best certified (lower, upper) of ``refine``'s routes, for the δ(ε) plot's marker."""
    s = refined.summary
    return None if refined.payload.get("solve") != "epsilon" else (s["lower"], s["upper"])


def _grid_width(pld: Guarantee | None) -> float:
    """The PLD route's grid width (from its detail ``h=…``), 2e-4 when it did not say."""
    for part in ((pld.detail if pld is not None else "") or "").split(","):
        part = part.strip()
        if part.startswith("h="):
            try:
                return float(part[2:].split()[0])
            except ValueError:
                break
    return 2e-4

