"""``python -m dpviz gce``: hypothesis DP under a database prior, a membership cap or an allowed set, as JSON.

One of ``--prior`` (a prior typed as on the Database priors page: ``uniform-nonzero`` for 0⃗
against U(B∖{0⃗}), ``at-least:K2`` for U{|b| < K2} against U{|b| ≥ K2}, ``zero``, ``one``,
``below:K2``, weights over |b| such as ``'1:0.5, 2-4:0.5'`` or over b such as ``'0110:0.5, 1001:0.5'``;
``--null`` the null hypothesis, ``paper`` by default), ``--cap C --neighbouring unbounded|bounded``
or ``--allowed '1100, 0011, 0000'`` (the b a person may have; k is their length). ``--levels
"ε:δ:count,…"`` with ``--cap`` gives each release its own (ε_i, δ_i), as ``compose --levels``
(instead of --eps0/--delta0/--k): the worst C of them, HBW Thm 2 and Ex. 1. The flags are the
page's URL keys. Every value is ε at total δ ≤ --delta with its kind, source and proved directions.
For the uniform prior, ``theorem3_basic|advanced|optimal`` are HBW Thm 3 with the best split of δ
over its terms and ``theorem3_*_common`` the same theorem with one common δ̂ for every term.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from dpviz.cli import subcommand_help
from dpviz.cli.flags import add_param_flags, values_from_args
from dpviz.gce import heterogeneous, summary
from dpviz.gce.questions import ALLOWED, NEIGHBOURING, NULL, PAPER_NULL, PRIOR, Question, typed_bounds
from dpviz.gce.typed import parse_allowed
from dpviz.params import BUDGET, CLI_CAP, CLI_DELTA0, CLI_EPS0, CLI_K, CLI_LEVELS, TARGET_DELTA
from dpviz.results import results_json
from dpviz.validation import ParameterError

CLI_NEIGHBOURING = replace(NEIGHBOURING, help="unbounded or bounded (with --cap or --allowed).")
CLI_PRIOR = replace(PRIOR, default=None, help=PRIOR.help.replace(", as `gce --prior` and more: ", ": "))
CLI_NULL = replace(NULL, help=NULL.help + " With --prior only.")
CLI_ALLOWED = replace(ALLOWED, default=None)

GCE_LEVELS = replace(CLI_LEVELS, help='Heterogeneous releases "ε:δ:count,…" (as compose --levels) instead '
                     "of --eps0/--delta0/--k; with --cap only.")
PARAMS = (CLI_EPS0, CLI_DELTA0, CLI_K, GCE_LEVELS, TARGET_DELTA, CLI_PRIOR, CLI_NULL, CLI_CAP,
          CLI_NEIGHBOURING, CLI_ALLOWED, BUDGET)
REQUIRED = ("delta",)
OPTIONAL = ("eps0", "k", "levels", "prior", "cap", "allowed", "budget")
CHOICES = "exactly one of --prior, --cap or --allowed"


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("gce", description=__doc__,
                        help=subcommand_help("gce"))
    add_param_flags(p, PARAMS, required=REQUIRED, optional=OPTIONAL)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> dict[str, Any]:
    v = values_from_args(args, PARAMS, optional=OPTIONAL)
    given = [key for key in ("prior", "cap", "allowed") if key in v]
    if len(given) != 1:
        raise ParameterError("prior/cap/allowed", None, CHOICES)
    if v["null"] != PAPER_NULL and "prior" not in v:
        raise ParameterError("null", v["null"], "a null hypothesis only with --prior")
    if "levels" in v:
        return _levels(args, v)
    if "eps0" not in v:
        raise ParameterError("eps0", None, "a number in [0, 100] (or --levels with --cap)")
    common = {"eps0": v["eps0"], "delta0": v["delta0"], "delta": v["delta"], "budget": v.get("budget")}
    if "allowed" in v:
        allowed = parse_allowed(v["allowed"])
        if "k" in v and v["k"] != len(allowed[0]):
            raise ParameterError("k", v["k"], f"the allowed vectors' length {len(allowed[0])} (or no --k)")
        result = summary.allowed_set(allowed, neighbouring=v["neighbouring"], **common)
    elif "k" not in v:
        raise ParameterError("k", None, "a whole number ≥ 1, given with --prior or --cap")
    elif "cap" in v:
        result = summary.capped(k=v["k"], cap=v["cap"], neighbouring=v["neighbouring"], **common)
    else:  # the page's typed priors; the paper's own pairs get every row of the paper
        budget = common.pop("budget")
        q = Question(kind="typed", k=v["k"], prior=v["prior"], null=v["null"], **common)
        result = typed_bounds(q, budget=budget)
    return results_json(result)


def _levels(args: argparse.Namespace, v: dict[str, Any]) -> dict[str, Any]:
    """--levels with --cap: each release its own (ε_i, δ_i) (HBW Thm 2, Ex. 1; docs/MATH.md §22)."""
    if "cap" not in v:
        raise ParameterError("levels", args.levels, "given with --cap (not --prior or --allowed)")
    if "eps0" in v or "k" in v:
        raise ParameterError("levels", args.levels, "used without --eps0 and --k")
    result = heterogeneous.capped(v["levels"], cap=v["cap"], neighbouring=v["neighbouring"], delta=v["delta"],
                                  budget=v.get("budget"))
    return results_json(result)
