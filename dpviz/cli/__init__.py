"""The ``dpviz`` command (also ``python -m dpviz``): JSON on stdout; on bad input exit 2 with one
line on stderr.

Start-up stays light: the top-level parser knows each subcommand only by its name and summary
(:data:`SUBCOMMANDS`); the module that implements a subcommand (and its numpy/scipy/plotly imports)
is imported only when that subcommand is the one typed. Each such module exposes
``register(subparsers)``, which adds the full parser with a ``handler`` default mapping the parsed
namespace to a JSON-ready dict.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from dpviz.validation import ParameterError


class Subcommand(NamedTuple):
    """A subcommand as ``dpviz --help`` lists it: the question it answers and one example."""

    summary: str
    example: str


SUBCOMMANDS: dict[str, Subcommand] = {
    "compose": Subcommand(
        "total ε (at a total δ) or δ (at an ε) after k runs of an (ε0, δ0)-DP mechanism, by every "
        "composition theorem (basic, advanced, KOV, zCDP, optimal)",
        "compose --eps0 0.1 --delta0 1e-6 --k 2000 --delta 1e-2"),
    "gce": Subcommand(
        "the same question when each person is in at most some of the k databases "
        "(a membership cap, a prior over databases, an allowed set)",
        "gce --eps0 0.1 --delta0 1e-6 --k 2000 --cap 365 --delta 1e-2"),
    "mechanism": Subcommand(
        "ε (or δ) of k runs of a concrete mechanism (Gaussian, Laplace, …), optionally subsampled, "
        "certified as an interval",
        "mechanism gaussian --sigma 1.1 --sampling-rate 0.01 --k 10000 --delta 1e-5"),
    "figure": Subcommand(
        "a page's figure as SVG, PNG or PDF, its tables as CSV, its numbers as JSON",
        "figure regions --eps0 0.1 --delta0 0.001 --k 30 --out regions.svg"),
    "plan": Subcommand(
        "plan a budget: the largest per-step ε0 or number of runs k, or the smallest noise, "
        "that keeps a total (ε, δ)",
        "plan noise gaussian --epsilon 1 --delta 1e-5 --k 10000 --sampling-rate 0.01"),
    "attack": Subcommand(
        "run a membership attack on a mechanism and certify the ε it shows, beside the proven ε",
        "attack randomized-response --eps0 1 --k 10 --trials 100000 --seed 1 --delta 1e-5"),
}
"""Every subcommand in the order ``--help`` lists them; ``dpviz.cli.NAME`` implements ``NAME``."""

DESCRIPTION = """\
How much privacy is left after composing differentially private releases.
Each subcommand answers one question and prints the answer as JSON, with the
theorem behind every number; bad input exits with status 2 and one line that
names the flag and its allowed range."""


def subcommand_help(name: str) -> str:
    """The one-line help of subcommand ``name`` (its ``register`` shows the same line)."""
    return SUBCOMMANDS[name].summary


def program_name() -> str:
    """``dpviz`` when the console command was typed, else ``python -m dpviz``."""
    return "dpviz" if Path(sys.argv[0]).stem == "dpviz" else "python -m dpviz"


def _epilog(prog: str) -> str:
    lines = ["examples:"]
    for sub in SUBCOMMANDS.values():
        lines.append(f"  {prog} {sub.example}")
    lines.append(f"\n'{prog} SUBCOMMAND --help' lists a subcommand's flags with their ranges.")
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def _chosen(argv: Sequence[str]) -> str | None:
    """The subcommand typed: the first word of ``argv`` when it names one (the top-level parser has
    no option taking a value, so it is the first argument that is not an option)."""
    for word in argv:
        if word.startswith("-"):
            if word in ("-h", "--help"):
                return None  # the top-level help is asked for before any subcommand
            continue
        return word if word in SUBCOMMANDS else None
    return None


def build_parser(argv: Sequence[str] | None = None, *, prog: str | None = None) -> argparse.ArgumentParser:
    """The parser of the whole command line (``argv`` None: every subcommand in full), or of
    ``argv``: its subcommand in full and every other by name and summary only."""
    prog = prog or program_name()
    chosen = None if argv is None else _chosen(argv)
    parser = _Parser(prog=prog, description=DESCRIPTION, epilog=_epilog(prog),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    subs = parser.add_subparsers(dest="command", required=True, parser_class=_Parser,
                                 title="subcommands")
    for name in SUBCOMMANDS:
        if argv is None or name == chosen:
            importlib.import_module(f"dpviz.cli.{name}").register(subs)
        else:
            subs.add_parser(name, help=subcommand_help(name))
    return parser


def _utf8(stream: object) -> None:
    """JSON is UTF-8 (RFC 8259): write ε and σ as themselves whatever the locale says."""
    if isinstance(stream, io.TextIOWrapper) and stream.encoding.lower().replace("-", "") != "utf8":
        stream.reconfigure(encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    prog = program_name()
    args = build_parser(args_list, prog=prog).parse_args(args_list)
    try:
        result = args.handler(args)
    except ParameterError as exc:
        sys.stderr.write(f"{prog} {args.command}: error: {exc}\n")
        return 2
    if result is not None:
        try:
            _utf8(sys.stdout)
            json.dump(result, sys.stdout, indent=2, allow_nan=False, ensure_ascii=False)
            sys.stdout.write("\n")
            sys.stdout.flush()
        except BrokenPipeError:  # the reader (``| head``) left: stop quietly, as other tools do
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141  # 128 + SIGPIPE, the shell's status for a pipe that closed
    return 0
