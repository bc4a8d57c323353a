"""``python -m dpviz mechanism KIND …`` and ``… mechanism mix --spec …``: ε at δ (or δ at ε) of
compositions of concrete mechanisms, as JSON.

One subcommand per registered mechanism (``dpviz.mechanisms.registry``), its flags generated from
the mechanism's ``Param`` specs. The answer is the best sound upper bound over the accounting
routes (``dpviz.mechanisms.routes``, listed below) with the best certified lower bound:
``{"epsilon": upper, "epsilon_lower", "epsilon_upper", "method": the route of the upper,
"width", "seconds", "detail"}`` (with ``--epsilon E``: ``delta``, ``delta_lower``,
``delta_upper``). ``--compare`` adds every route under ``routes``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from dpviz.cli import subcommand_help
from dpviz.cli.flags import add_param_flags, values_from_args
from dpviz.figures.mechanisms import ROUTE_KEYS, ROUTE_LABELS
from dpviz.guarantee import Solved, Status, finite_or_none
from dpviz.mechanisms import registry
from dpviz.mechanisms import routes as R
from dpviz.mechanisms.registry import MECHANISMS, NEIGHBOURING, make_sampled, mechanism_class
from dpviz.params import (
    BATCH_SIZE,
    BUDGET,
    CLI_K,
    DATASET_SIZE,
    SAMPLING_RATE,
    TARGET_DELTA,
    TARGET_EPSILON,
    Param,
)
from dpviz.results import intervals_json
from dpviz.validation import ParameterError, check_positive

K = replace(CLI_K, label="k (steps)", help="Number of compositions, a whole number in [1, 10,000,000].")
RATE = replace(SAMPLING_RATE, default=None, help=SAMPLING_RATE.help + " Absent: no subsampling "
               "(or --batch-size/--dataset-size: fixed-size batches).")
BATCH = replace(BATCH_SIZE, default=None, span=None)
POPULATION = replace(DATASET_SIZE, default=None, span=None)
H = Param("h", "PLD grid width", None, lambda v: check_positive(v, field="h"),
          "PLD grid width (default: automatic)")
TARGETS = (TARGET_DELTA, TARGET_EPSILON)
OPTIONAL = ("sampling_rate", "batch_size", "dataset_size", "h", "budget", "delta", "epsilon")
ROUTES_HELP = "routes (the keys of \"method\" and \"routes\"):\n" + "\n".join(
    f"  {key}: {ROUTE_LABELS[key]}" for key in ROUTE_KEYS)
"""The route keys of the JSON (``method``, ``routes``) with their names, generated from ``ROUTE_KEYS``."""

def _common(q: argparse.ArgumentParser) -> None:
    add_param_flags(q.add_mutually_exclusive_group(required=True), TARGETS, optional=OPTIONAL)
    add_param_flags(q, (H, BUDGET), optional=OPTIONAL)
    q.add_argument("--compare", action="store_true",
                   help=f"also report every other route under \"routes\" ({', '.join(ROUTE_KEYS)}; "
                        "buckets for one mechanism at a δ > 0)")


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("mechanism", help=subcommand_help("mechanism"),
                        description=f"{__doc__}\n{ROUTES_HELP}",
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    kinds = p.add_subparsers(dest="kind", required=True, parser_class=type(p))
    for key, cls in MECHANISMS.items():
        q = kinds.add_parser(key, help=f"{cls.title} mechanism")
        add_param_flags(q, cls.params, required=cls.required)
        add_param_flags(q, (K,), required=("k",))
        add_param_flags(q, (RATE, BATCH, POPULATION), optional=OPTIONAL)
        q.add_argument("--neighbouring", choices=NEIGHBOURING, default="add-remove",
                       help="neighbouring relation under subsampling (default add-remove; replace-one: "
                            "Steinke §6.2)")
        _common(q)
        q.set_defaults(handler=run)
    m = kinds.add_parser("mix", help="several mechanisms composed in one run (heterogeneous)")
    m.add_argument("--spec", required=True,
                   help='a JSON file, or inline JSON: a list of {"mechanism": KIND, its parameters…, '
                        '"count": n, "sampling_rate": q (optional), "neighbouring": … (optional)}')
    m.add_argument("--neighbouring", choices=NEIGHBOURING, default="add-remove",
                   help="neighbouring relation of the subsampled entries that do not name one "
                        "(default add-remove)")
    _common(m)
    m.set_defaults(handler=run_mix)


# ---------------------------------------------------------------------- spec of a mix
SPEC_MAX_BYTES = 1 << 20
"""Longest mix spec read, inline or from a file (100 entries of a few hundred bytes each fit many
times over): a file is read up to one byte beyond, so ``/dev/zero`` or a huge file costs 1 MiB."""


def load_spec(text: str, *, neighbouring: str = "add-remove") -> list[tuple[Any, int]]:
    """Parts of a mix from inline JSON or a JSON file (at most ``SPEC_MAX_BYTES``, checked before
    the JSON is read); one ``ParameterError`` naming the field."""
    raw = text.strip()
    if not raw.startswith(("[", "{")):
        try:
            with Path(text).open("rb") as f:
                data = f.read(SPEC_MAX_BYTES + 1)
            if len(data) > SPEC_MAX_BYTES:
                raise ParameterError("spec", text, f"a JSON file of at most {SPEC_MAX_BYTES:,} bytes")
            raw = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ParameterError("spec", text, f"a readable JSON file or inline JSON ({type(exc).__name__})"
                                 ) from None
    elif len(raw.encode("utf-8", "surrogatepass")) > SPEC_MAX_BYTES:
        raise ParameterError("spec", f"{len(raw):,} characters of inline JSON",
                             f"inline JSON of at most {SPEC_MAX_BYTES:,} bytes")
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, RecursionError) as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise ParameterError("spec", text[:60], f"valid JSON ({msg})") from None
    return registry.parts(data, field="spec", neighbouring=neighbouring)


# ---------------------------------------------------------------------- answering
def answer(parts: list[tuple[Any, int]], *, delta: float | None, epsilon: float | None, h: float | None,
           budget: Any, compare: bool) -> dict[str, Any]:
    """The JSON answer for ``parts`` (module docstring)."""
    if delta == 0 and R.largest_loss(parts) is None:
        raise ParameterError("delta", 0, "> 0 here: the privacy loss is unbounded (a Gaussian tail or mass "
                                         "at +∞), so ε at δ = 0 is infinite")
    results = R.routes(parts, delta=delta, epsilon=epsilon, h=h, budget=budget, compare=compare)
    solved: Solved = "epsilon" if delta is not None else "delta"
    key, g = R.best(results, solved=solved)
    name = solved
    out: dict[str, Any] = {}
    if solved == "delta":
        out["epsilon"] = epsilon
    out.update({name: finite_or_none(g.upper), f"{name}_lower": finite_or_none(g.lower),
                f"{name}_upper": finite_or_none(g.upper), "method": key, "width": finite_or_none(g.width),
                "seconds": g.seconds or 0.0, "detail": g.detail})
    if solved == "epsilon":
        out["delta"] = delta
    out.update({"kind": g.kind.value, "source": g.source, "status": g.status.value})
    if g.note:  # e.g. "routes disagree: …" (a certified lower above another route's upper)
        out["note"] = g.note
    pld = results.get("pld")
    if pld is not None and pld.status is Status.NOT_COMPUTED and g.status is Status.OK:
        out["reason"] = f"PLD not computed: {pld.reason}; shown: the {key} upper bound"
    elif g.status is not Status.OK:
        out["reason"] = g.reason
    if compare:
        out["routes"] = intervals_json(results)
    out["mechanisms"] = [{**m.describe(), "count": c} for m, c in parts]
    return out


def _targets(args: argparse.Namespace) -> dict[str, Any]:
    v = values_from_args(args, (*TARGETS, H, BUDGET), optional=OPTIONAL)
    return {"delta": v.get("delta"), "epsilon": v.get("epsilon"), "h": v.get("h"), "budget": v.get("budget")}


def run(args: argparse.Namespace) -> dict[str, Any]:
    cls = mechanism_class(args.kind)
    values = values_from_args(args, cls.params)
    k = values_from_args(args, (K,))["k"]
    sampling = values_from_args(args, (RATE, BATCH, POPULATION), optional=OPTIONAL)
    if ("batch_size" in sampling) != ("dataset_size" in sampling):
        raise ParameterError("batch_size/dataset_size", None, "both given (fixed-size sampling: m of n)")
    batch = (sampling["batch_size"], sampling["dataset_size"]) if "batch_size" in sampling else None
    mech = make_sampled(args.kind, sampling_rate=sampling.get("sampling_rate"),
                        neighbouring=args.neighbouring, batch=batch, params=values)
    return answer([(mech, k)], compare=args.compare, **_targets(args))


def run_mix(args: argparse.Namespace) -> dict[str, Any]:
    parts = load_spec(args.spec, neighbouring=args.neighbouring)
    return answer(parts, compare=args.compare, **_targets(args))
