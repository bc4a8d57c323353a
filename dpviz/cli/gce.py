"""``python -m dpviz gce``: hypothesis DP under a database prior or membership cap, as JSON.

One of ``--prior uniform-nonzero`` (0⃗ against U(B∖{0⃗})), ``--prior at-least:K2``
(U{|b| < K2} against U{|b| ≥ K2}) or ``--cap C --neighbouring unbounded|bounded``.
Every value is ε at total δ ≤ --delta with its kind, source and proved directions. For the
uniform prior, ``theorem3_basic|advanced|optimal`` are HBW Thm 3 with the best split of δ over its
terms and ``theorem3_*_common`` the same theorem with one common δ̂ for every term.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from dpviz.cli.flags import add_param_flags, values_from_args
from dpviz.gce import summary
from dpviz.params import BUDGET, CLI_CAP, CLI_DELTA0, CLI_EPS0, CLI_K, PRIOR, TARGET_DELTA
from dpviz.validation import ParameterError, check_count
from dpviz.views.database_priors import NEIGHBOURING

CLI_NEIGHBOURING = replace(NEIGHBOURING, help="unbounded or bounded (with --cap).")

PARAMS = (CLI_EPS0, CLI_DELTA0, CLI_K, TARGET_DELTA, PRIOR, CLI_CAP, CLI_NEIGHBOURING, BUDGET)
REQUIRED = ("eps0", "k", "delta")
OPTIONAL = ("prior", "cap", "budget")


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("gce", help="generalized composition experiment: priors and membership caps",
                        description=__doc__)
    add_param_flags(p, PARAMS, required=REQUIRED, optional=OPTIONAL)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> dict[str, Any]:
    v = values_from_args(args, PARAMS, optional=OPTIONAL)
    if ("prior" in v) == ("cap" in v):
        raise ParameterError("prior/cap", None, "exactly one of --prior or --cap")
    common = {"eps0": v["eps0"], "delta0": v["delta0"], "delta": v["delta"], "budget": v.get("budget")}
    k = v["k"]
    if "cap" in v:
        result = summary.capped(k=k, cap=v["cap"], neighbouring=v["neighbouring"], **common)
    elif v["prior"] == "uniform-nonzero":
        result = summary.uniform_nonzero(k=k, **common)
    else:
        k2 = check_count(v["prior"].split(":", 1)[1], field="prior at-least:K2", maximum=k)
        result = summary.at_least(k=k, k2=k2, **common)
    return {key: bound.to_json() for key, bound in result.items()}
