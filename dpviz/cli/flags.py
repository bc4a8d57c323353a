"""CLI flags generated from ``dpviz.params.Param`` specs: one parameter path from URL to CLI.

A ``Param``'s ``key`` is its URL query key and, with ``_`` spelled ``-``, its CLI flag
(``k_max`` → ``--k-max``, and ``--k_max`` as in the URL); its ``help`` (or ``label``) and
``default`` give the help text, its ``check`` the value and the one-line error naming the field.
Subcommands call
:func:`add_param_flags` to declare them and :func:`values_from_args` to read them back.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from dpviz.params import Param


def flag(p: Param) -> str:
    """The CLI spelling of ``p``: ``--`` and its key with ``-`` for ``_``."""
    return "--" + p.key.replace("_", "-")


def flags(p: Param) -> tuple[str, ...]:
    """Every spelling the CLI accepts for ``p``: :func:`flag`, and ``--`` + the URL key itself
    when that differs (``--k_max``), so that a URL's query keys are valid flags as written."""
    url = "--" + p.key
    return (flag(p),) if url == flag(p) else (flag(p), url)


def help_text(p: Param, *, optional: bool = False) -> str:
    """The spec's help (its label when it has none), with its default unless ``optional``."""
    text = p.help or p.label
    if optional or p.default is None:
        return text
    if isinstance(p.default, bool):
        shown = str(p.default).lower()
    elif isinstance(p.default, float):
        shown = f"{p.default:g}"
    else:
        shown = str(p.default)
    return f"{text} (default {shown})"


def add_param_flags(parser: Any, params: Iterable[Param], *, required: Collection[str] = (),
                    optional: Collection[str] = (), aliases: Mapping[str, str] | None = None) -> None:
    """One ``--flag`` per spec on ``parser`` (a parser or an argument group).

    A key in ``required`` must be given; a key in ``optional`` is None when not given (the
    subcommand decides what its absence means); any other flag defaults to the spec's default.
    ``aliases`` (old URL key → key, ``ViewSpec.aliases``) adds ``--old`` as another spelling, so
    a link shared before a key was renamed still reads as flags. Values are kept as typed:
    :func:`values_from_args` checks them.
    """
    old: dict[str, list[str]] = {}
    for alias, key in (aliases or {}).items():
        old.setdefault(key, []).append("--" + alias)
    for p in params:
        names = (*flags(p), *old.get(p.key, ()))
        if p.key in required:
            parser.add_argument(*names, dest=p.key, required=True, help=help_text(p, optional=True))
        elif p.key in optional:
            parser.add_argument(*names, dest=p.key, default=None, help=help_text(p, optional=True))
        else:
            parser.add_argument(*names, dest=p.key, default=None, help=help_text(p))


def values_from_args(args: argparse.Namespace, params: Iterable[Param], *,
                     optional: Collection[str] = ()) -> dict[str, Any]:
    """The checked value of every spec, in order. A flag not given takes the spec's default,
    except a key in ``optional``, which is left out.

    A bad value raises ``ParameterError`` naming the flag the user typed (``eps0``, not the page's
    ``ε0``; ``png-scale``); an error about one part of the value (a cell of ``--levels``) keeps
    that part's name.
    """
    values: dict[str, Any] = {}
    for p in params:
        raw = getattr(args, p.key, None)
        if raw is None:
            if p.key in optional:
                continue
            raw = p.default
        values[p.key] = p.parse(raw, name=flag(p)[2:])
    return values
