"""``python -m dpviz gce``: hypothesis DP under a database prior or membership cap, as JSON.

One of ``--prior uniform-nonzero`` (0⃗ against U(B∖{0⃗})), ``--prior at-least:K2``
(U{|b| < K2} against U{|b| ≥ K2}) or ``--cap C --neighbouring unbounded|bounded``.
Every value is ε at total δ ≤ --delta with its kind, source and proved directions.
"""

from __future__ import annotations

import argparse
from typing import Any

from dpviz.budget import from_seconds
from dpviz.gce import summary
from dpviz.gce.constraints import check_neighbouring
from dpviz.validation import ParameterError, check_count, check_delta, check_epsilon


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("gce", help="generalized composition experiment: priors and membership caps",
                        description=__doc__)
    p.add_argument("--eps0", required=True, help="per-mechanism ε0, in [0, 100]")
    p.add_argument("--delta0", default="0", help="per-mechanism δ0, in [0, 1) (default 0)")
    p.add_argument("--k", required=True, help="number of databases / mechanisms, a whole number ≥ 1")
    p.add_argument("--delta", required=True, help="target total δ, in [0, 1)")
    p.add_argument("--prior", help='"uniform-nonzero" or "at-least:K2"')
    p.add_argument("--cap", help="at most C databases per person, a whole number ≥ 1 (C ≥ k: no constraint)")
    p.add_argument("--neighbouring", default="unbounded", help="unbounded (default) or bounded, with --cap")
    p.add_argument("--budget", help="seconds of work allowed for each exact route (default 60); beyond it "
                                    "the best bound that applies answers, with the reason")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> dict[str, Any]:
    k = check_count(args.k, field="k")
    eps0 = check_epsilon(args.eps0, field="eps0")
    delta0 = check_delta(args.delta0, field="delta0")
    delta = check_delta(args.delta, field="delta")
    if (args.prior is None) == (args.cap is None):
        raise ParameterError("prior/cap", None, "exactly one of --prior or --cap")
    neighbouring = check_neighbouring(args.neighbouring)
    budget = None if args.budget is None else from_seconds(args.budget)
    if args.cap is not None:
        cap = check_count(args.cap, field="cap")
        result = summary.capped(k=k, cap=cap, neighbouring=neighbouring,
                                eps0=eps0, delta0=delta0, delta=delta, budget=budget)
    elif args.prior == "uniform-nonzero":
        result = summary.uniform_nonzero(k=k, eps0=eps0, delta0=delta0, delta=delta, budget=budget)
    elif str(args.prior).startswith("at-least:"):
        k2 = check_count(str(args.prior).split(":", 1)[1], field="prior at-least:K2", maximum=k)
        result = summary.at_least(k=k, k2=k2, eps0=eps0, delta0=delta0, delta=delta, budget=budget)
    else:
        raise ParameterError("prior", args.prior, '"uniform-nonzero" or "at-least:K2"')
    return {key: bound.to_json() for key, bound in result.items()}
