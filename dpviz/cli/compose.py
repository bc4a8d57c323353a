"""``python -m dpviz compose``: classic composition by every method, as JSON."""

from __future__ import annotations

import argparse
from typing import Any

from dpviz.budget import from_seconds
from dpviz.composition import METHODS, homogeneous, parse_levels
from dpviz.validation import ParameterError, check_count, check_delta, check_epsilon


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("compose", help="k-fold composition of (ε0, δ0)-DP mechanisms",
                        description="Each method's ε at total δ ≤ --delta, or δ at --epsilon.")
    p.add_argument("--eps0", help="per-mechanism ε0, in [0, 100]")
    p.add_argument("--delta0", default="0", help="per-mechanism δ0, in [0, 1) (default 0)")
    p.add_argument("--k", help="number of mechanisms, a whole number ≥ 1")
    p.add_argument("--levels", help='heterogeneous input "ε:δ:count,…" instead of --eps0/--delta0/--k')
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--delta", help="target total δ, in [0, 1)")
    target.add_argument("--epsilon", help="target total ε, ≥ 0")
    p.add_argument("--budget", help="seconds of work allowed for the exact optimum (default 60); beyond it "
                                    "the best closed form answers, with the reason")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.levels is not None:
        if args.eps0 is not None or args.k is not None:
            raise ParameterError("levels", args.levels, "used without --eps0 and --k")
        levels = parse_levels(args.levels)
    else:
        if args.eps0 is None or args.k is None:
            raise ParameterError("eps0/k", None, "given (or use --levels)")
        levels = homogeneous(k=check_count(args.k, field="k"),
                             eps0=check_epsilon(args.eps0, field="eps0"),
                             delta0=check_delta(args.delta0, field="delta0"))
    budget = None if args.budget is None else from_seconds(args.budget)
    if args.delta is not None:
        delta = check_delta(args.delta, field="delta")
        return {key: m.epsilon_for_delta(levels, delta=delta, budget=budget).to_json()
                for key, m in METHODS.items()}
    epsilon = check_epsilon(args.epsilon, field="epsilon", maximum=1e9)
    return {key: m.delta_for_epsilon(levels, epsilon=epsilon, budget=budget).to_json()
            for key, m in METHODS.items()}
