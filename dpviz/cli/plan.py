"""``python -m dpviz plan eps0|k|noise|gce …``: the inverse questions (issue 9), as JSON.

- ``eps0``: the largest per-step ε0 for --k releases at total (--epsilon, --delta), per method
  (or, with --levels, the largest common factor of the levels' ε's);
- ``k``: the largest number of (--eps0, --delta0)-DP releases, per method;
- ``noise MECHANISM``: the smallest noise (σ, b; ε0 for geometric and randomized response) for
  --k releases, Poisson-subsampled with --sampling-rate; given the noise (--sigma …) instead of
  --k: the largest number of steps (DP-SGD);
- ``gce``: the largest per-database ε0 with --cap or --prior, per bound.
Each answer: the value, the forward check (total ε, δ, kind, source) and the next value up.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from dpviz.cli import subcommand_help
from dpviz.cli.flags import add_param_flags, values_from_args
from dpviz.composition import METHODS
from dpviz.mechanisms.registry import MECHANISMS, NEIGHBOURING
from dpviz.params import (
    BUDGET,
    CLI_CAP,
    CLI_DELTA0,
    CLI_EPS0,
    CLI_K,
    CLI_LEVELS,
    PRIOR,
    SAMPLING_RATE,
    TARGET_DELTA,
    TARGET_EPSILON,
    subsampling,
)
from dpviz.planner import composition, gce, noise
from dpviz.planner.result import Plan
from dpviz.results import results_json
from dpviz.validation import ParameterError

RATE = replace(SAMPLING_RATE, default=None, help=SAMPLING_RATE.help + " Absent: no subsampling.")
TARGETS = (TARGET_EPSILON, TARGET_DELTA)
OPTIONAL = ("budget", "sampling_rate", "prior", "cap", "k", "levels")


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("plan", help=subcommand_help("plan"),
                        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    qs = p.add_subparsers(dest="question", required=True, parser_class=type(p))

    q = qs.add_parser("eps0", help="largest per-step ε0 for k releases (or common factor of --levels)")
    add_param_flags(q, TARGETS, required=("epsilon", "delta"))
    add_param_flags(q, (CLI_K, CLI_DELTA0, CLI_LEVELS, BUDGET), optional=OPTIONAL)
    q.set_defaults(handler=run_eps0)

    q = qs.add_parser("k", help="largest number of (ε0, δ0)-DP releases")
    add_param_flags(q, TARGETS, required=("epsilon", "delta"))
    add_param_flags(q, (CLI_EPS0,), required=("eps0",))
    add_param_flags(q, (CLI_DELTA0, BUDGET), optional=OPTIONAL)
    q.set_defaults(handler=run_k)

    q = qs.add_parser("noise", help="smallest noise for k releases (or largest steps for a noise)")
    kinds = q.add_subparsers(dest="mechanism", required=True, parser_class=type(p))
    for key in noise.NOISE:
        cls = MECHANISMS[key]
        m = kinds.add_parser(key, help=f"{cls.title}: smallest {noise.NOISE[key][0]} "
                             "(or, given it, largest k)")
        add_param_flags(m, TARGETS, required=("epsilon", "delta"))
        add_param_flags(m, (CLI_K,), optional=OPTIONAL)
        add_param_flags(m, cls.params, optional=tuple(p.key for p in cls.params))
        add_param_flags(m, (RATE, BUDGET), optional=OPTIONAL)
        m.add_argument("--neighbouring", choices=NEIGHBOURING, default="add-remove",
                       help="neighbouring relation under subsampling (default add-remove)")
        m.set_defaults(handler=run_noise)

    q = qs.add_parser("gce", help="largest per-database ε0 with a membership cap or a prior")
    add_param_flags(q, TARGETS, required=("epsilon", "delta"))
    add_param_flags(q, (CLI_K,), required=("k",))
    add_param_flags(q, (CLI_DELTA0, PRIOR, CLI_CAP, BUDGET), optional=OPTIONAL)
    q.add_argument("--neighbouring", choices=("unbounded", "bounded"), default="unbounded",
                   help="unbounded or bounded (with --cap).")
    q.set_defaults(handler=run_gce)


def _plans(plans: dict[str, Plan]) -> dict[str, Any]:
    return results_json(plans)


def run_eps0(args: argparse.Namespace) -> dict[str, Any]:
    v = values_from_args(args, (*TARGETS, CLI_K, CLI_DELTA0, CLI_LEVELS, BUDGET), optional=OPTIONAL)
    if ("levels" in v) == ("k" in v):
        raise ParameterError("k/levels", None, "exactly one of --k or --levels")
    if "levels" in v:
        return _plans(composition.max_factor(v["levels"], epsilon=v["epsilon"], delta=v["delta"],
                                             budget=v.get("budget")))
    out = composition.max_eps0(k=v["k"], epsilon=v["epsilon"], delta=v["delta"], delta0=v["delta0"],
                               budget=v.get("budget"))
    return {key: {"eps0": (j := p.to_json()).pop("eps0"), "delta0": v["delta0"], **j}
            for key, p in out.items()}


def run_k(args: argparse.Namespace) -> dict[str, Any]:
    v = values_from_args(args, (*TARGETS, CLI_EPS0, CLI_DELTA0, BUDGET), optional=OPTIONAL)
    return _plans(composition.max_k(eps0=v["eps0"], epsilon=v["epsilon"], delta=v["delta"],
                                    delta0=v["delta0"], budget=v.get("budget")))


def run_noise(args: argparse.Namespace) -> dict[str, Any]:
    key = args.mechanism
    cls = MECHANISMS[key]
    param = noise.NOISE[key][0]
    v = values_from_args(args, (*TARGETS, CLI_K, RATE, BUDGET), optional=OPTIONAL)
    mv = values_from_args(args, cls.params, optional=tuple(p.key for p in cls.params))
    if ("k" in v) == (param in mv):
        raise ParameterError(f"k/{param}", None, f"exactly one of --k (smallest {param}) or --{param} "
                             "(largest number of steps)")
    common = {"epsilon": v["epsilon"], "delta": v["delta"], "sensitivity": mv.get("sensitivity"),
              "categories": mv.get("categories"), "sampling_rate": subsampling(v.get("sampling_rate")),
              "neighbouring": args.neighbouring, "budget": v.get("budget")}
    if "k" in v:
        plan = noise.smallest_noise(key, k=v["k"], **common)
        j = plan.to_json()
        head = {param: j.pop(param), "just_below": plan.beyond_value,
                "certified_epsilon": plan.check.upper if plan.feasible else None,
                "route": j.pop("route", None)}
        return {**head, **j}
    plan = noise.largest_steps(key, noise=mv[param], **common)
    j = plan.to_json()
    return {"k": j.pop("k"), "certified_epsilon": plan.check.upper if plan.feasible else None,
            "route": j.pop("route", None), **j}


def run_gce(args: argparse.Namespace) -> dict[str, Any]:
    v = values_from_args(args, (*TARGETS, CLI_K, CLI_DELTA0, PRIOR, CLI_CAP, BUDGET), optional=OPTIONAL)
    return _plans(gce.max_eps0(k=v["k"], epsilon=v["epsilon"], delta=v["delta"], delta0=v["delta0"],
                               prior=v.get("prior"), cap=v.get("cap"), neighbouring=args.neighbouring,
                               budget=v.get("budget")))


__all__ = ["METHODS", "register"]
