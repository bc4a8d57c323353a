"""``python -m dpviz compose``: classic composition by every method, as JSON."""

from __future__ import annotations

import argparse
from typing import Any

from dpviz.cli import subcommand_help
from dpviz.cli.flags import add_param_flags, values_from_args
from dpviz.composition import METHODS, homogeneous
from dpviz.params import BUDGET, CLI_DELTA0, CLI_EPS0, CLI_K, CLI_LEVELS, TARGET_DELTA, TARGET_EPSILON
from dpviz.validation import ParameterError

PARAMS = (CLI_EPS0, CLI_DELTA0, CLI_K, CLI_LEVELS)
TARGETS = (TARGET_DELTA, TARGET_EPSILON)
"""Exactly one target: ε at total δ, or δ at total ε."""
OPTIONAL = ("eps0", "k", "levels", "delta", "epsilon", "budget")


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("compose", help=subcommand_help("compose"),
                        description="Each method's ε at total δ ≤ --delta, or δ at --epsilon.")
    add_param_flags(p, PARAMS, optional=OPTIONAL)
    add_param_flags(p.add_mutually_exclusive_group(required=True), TARGETS, optional=OPTIONAL)
    add_param_flags(p, (BUDGET,), optional=OPTIONAL)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.levels is not None:
        if args.eps0 is not None or args.k is not None:
            raise ParameterError("levels", args.levels, "used without --eps0 and --k")
    elif args.eps0 is None or args.k is None:
        raise ParameterError("eps0/k", None, "given (or use --levels)")
    v = values_from_args(args, (*PARAMS, *TARGETS, BUDGET), optional=OPTIONAL)
    levels = v["levels"] if "levels" in v else homogeneous(k=v["k"], eps0=v["eps0"], delta0=v["delta0"])
    budget = v.get("budget")
    if "delta" in v:
        return {key: m.epsilon_for_delta(levels, delta=v["delta"], budget=budget).to_json()
                for key, m in METHODS.items()}
    return {key: m.delta_for_epsilon(levels, epsilon=v["epsilon"], budget=budget).to_json()
            for key, m in METHODS.items()}
