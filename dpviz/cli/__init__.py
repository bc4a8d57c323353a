"""``python -m dpviz SUBCOMMAND …``: JSON on stdout, exit 2 with one line on stderr on bad input.

Each subcommand lives in its own module exposing ``register(subparsers)``, which adds
a parser whose ``handler`` default maps the parsed namespace to a JSON-ready dict.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Sequence

from dpviz.validation import ParameterError

SUBCOMMAND_MODULES = ("compose", "gce", "mechanism", "figure", "plan", "attack")


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m dpviz", description=__doc__)
    subs = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(f"dpviz.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"dpviz.cli.{name}":
                raise
            continue
        module.register(subs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result = args.handler(args)
    except ParameterError as exc:
        sys.stderr.write(f"python -m dpviz {args.command}: error: {exc}\n")
        return 2
    if result is not None:
        try:
            json.dump(result, sys.stdout, indent=2, allow_nan=False)
            sys.stdout.write("\n")
            sys.stdout.flush()
        except BrokenPipeError:  # the reader (``| head``) left: stop quietly, as other tools do
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141  # 128 + SIGPIPE, the shell's status for a pipe that closed
    return 0
