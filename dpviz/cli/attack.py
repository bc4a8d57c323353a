"""``python -m dpviz attack KIND [mechanism flags] --k K --trials N --seed S --delta D [--confidence C]``:
run the membership attack (``dpviz.attack``) and print one JSON object with ``empirical_epsilon``
(the ε the attack certifies at that confidence), ``proven_epsilon``, their ``ratio``, ``trials``,
``seconds`` and the details. The mechanism flags are those of ``python -m dpviz mechanism KIND``
(from the registry's ``Param`` specs); bad input, ``--trials`` above its maximum included, exits 2
with one line on stderr.
"""

from __future__ import annotations

import argparse
from typing import Any

from dpviz.attack import KINDS, PARAMS, make_attack, run_attack
from dpviz.cli import subcommand_help
from dpviz.cli.flags import add_param_flags, values_from_args
from dpviz.mechanisms.registry import mechanism_class

REQUIRED = ("k", "trials", "seed", "delta")
OPTIONAL = ("sampling_rate",)


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("attack", help=subcommand_help("attack"),
                        description=__doc__)
    kinds = p.add_subparsers(dest="kind", required=True, parser_class=type(p))
    for key in KINDS:
        cls = mechanism_class(key)
        q = kinds.add_parser(key, help=f"attack the {cls.title} mechanism")
        add_param_flags(q, cls.params, required=cls.required)
        add_param_flags(q, PARAMS, required=REQUIRED, optional=OPTIONAL)
        q.set_defaults(handler=run)


def run(args: argparse.Namespace) -> dict[str, Any]:
    cls = mechanism_class(args.kind)
    values = values_from_args(args, cls.params)
    settings = values_from_args(args, PARAMS, optional=OPTIONAL)
    attack = make_attack(args.kind, **settings, **values)
    return run_attack(attack).to_json()
