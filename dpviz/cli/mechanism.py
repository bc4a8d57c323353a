"""``python -m dpviz mechanism KIND …``: ε of k compositions of a concrete mechanism, as JSON.

``{"epsilon": upper, "epsilon_lower": …, "epsilon_upper": …, "method": …}``: the Gaussian
without subsampling uses the closed form (Steinke Cor. 8/10, method ``analytic``), everything
else the certified PLD interval (method ``pld``). ``--compare`` adds every other route.
"""

from __future__ import annotations

import argparse
from typing import Any

from dpviz.budget import OverBudget, from_seconds
from dpviz.guarantee import finite_or_none
from dpviz.mechanisms.spec import (
    MechanismSpec,
    analytic_interval,
    generic_interval,
    pld_interval,
    rdp_interval,
    report,
)
from dpviz.pld.accountant import Interval
from dpviz.validation import check_count, check_delta, check_positive, check_probability

_KINDS: dict[str, tuple[tuple[str, str], ...]] = {
    "gaussian": (("--sigma", "noise standard deviation σ > 0"),),
    "laplace": (("--scale", "Laplace scale b > 0"),),
    "geometric": (("--eps0", "ε0 of the geometric (discrete Laplace) noise, e^{−ε0|z|}"),),
    "randomized-response": (("--eps0", "ε0 of randomized response"),),
    "canonical": (("--eps0", "ε0 of the canonical pair"), ("--delta0", "δ0 of the canonical pair")),
}


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("mechanism", help="k-fold composition of a concrete mechanism (PLD, exact bars)",
                        description=__doc__)
    kinds = p.add_subparsers(dest="kind", required=True, parser_class=type(p))
    for kind, extra in _KINDS.items():
        q = kinds.add_parser(kind, help=f"{kind} mechanism")
        for flag, text in extra:
            q.add_argument(flag, required=flag != "--delta0", default="0" if flag == "--delta0" else None,
                           help=text)
        if kind in ("gaussian", "laplace", "geometric"):
            q.add_argument("--sensitivity", default="1", help="query sensitivity Δ (default 1)")
        q.add_argument("--k", required=True, help="number of compositions, a whole number ≥ 1")
        q.add_argument("--sampling-rate", default=None, help="Poisson subsampling rate q in (0, 1]")
        q.add_argument("--delta", required=True, help="target δ in (0, 1)")
        q.add_argument("--h", default=None, help="PLD grid width (default: automatic)")
        q.add_argument("--compare", action="store_true",
                       help="also report RDP, privacy buckets and generic composition")
        q.add_argument("--budget", help="seconds of work allowed for the PLD (default 60); beyond it the "
                                        "grid coarsens, then the RDP bound answers, with the reason")
        q.set_defaults(handler=run)


def spec_from_args(args: argparse.Namespace) -> MechanismSpec:
    rate = None if args.sampling_rate is None else check_probability(args.sampling_rate,
                                                                     field="sampling_rate")
    sens = getattr(args, "sensitivity", "1")
    common: dict[str, Any] = {"sampling_rate": rate, "sensitivity": check_positive(sens, field="sensitivity")}
    if args.kind == "gaussian":
        return MechanismSpec("gaussian", sigma=check_positive(args.sigma, field="sigma"), **common)
    if args.kind == "laplace":
        return MechanismSpec("laplace", scale=check_positive(args.scale, field="scale"), **common)
    eps0 = check_positive(args.eps0, field="eps0", maximum=100.0)
    if args.kind == "canonical":
        return MechanismSpec("canonical", eps0=eps0, delta0=check_delta(args.delta0, field="delta0"),
                             **common)
    return MechanismSpec(args.kind, eps0=eps0, **common)


def run(args: argparse.Namespace) -> dict[str, Any]:
    spec = spec_from_args(args)
    k = check_count(args.k, field="k")
    delta = check_delta(args.delta, field="delta", positive=True)
    h = None if args.h is None else check_positive(args.h, field="h")
    budget = None if args.budget is None else from_seconds(args.budget)
    routes = report(spec, k=k, delta=delta, h=h, cost_budget=budget) if args.compare else None
    if routes is not None:  # the headline is one of the routes: compute it once
        iv = routes.get("analytic") or routes["pld"]
    else:
        try:
            iv = analytic_interval(spec, k=k, delta=delta) or pld_interval(spec, k=k, delta=delta, h=h,
                                                                          cost_budget=budget)
        except OverBudget as exc:
            iv = Interval(lower=None, upper=None, method="pld", detail=f"PLD {exc.reason}")
    not_computed = iv.detail if iv.method == "pld" and iv.lower is None else ""  # over budget
    if not_computed:  # the RDP upper bound answers (generic composition where RDP has no value)
        iv = rdp_interval(spec, k=k, delta=delta) or generic_interval(spec, k=k, delta=delta)
        iv = Interval(lower=None, upper=iv.upper, method=iv.method, seconds=iv.seconds, detail=iv.detail)
    out: dict[str, Any] = {"epsilon": finite_or_none(iv.upper), "epsilon_lower": finite_or_none(iv.lower),
                           "epsilon_upper": finite_or_none(iv.upper), "method": iv.method,
                           "width": finite_or_none(iv.width), "seconds": iv.seconds, "detail": iv.detail}
    if not_computed:
        out["reason"] = f"{not_computed}; shown: the {iv.method} upper bound"
    elif iv.upper is None:
        out["reason"] = "δ is below the probability mass at infinite privacy loss"
    if routes is not None:
        out["routes"] = {key: r.to_json() for key, r in routes.items()}
    return out
