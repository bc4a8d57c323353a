"""The Mechanisms page's heterogeneous runs: the mix editor (a mix spec as editable rows and back, the
spec ``python -m dpviz mechanism mix --spec`` reads), every route for a mix, and the (ε_i, δ_i, count)
levels table."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from dpviz import budget as budgets
from dpviz.budget import Budget
from dpviz.composition import as_levels
from dpviz.composition.levels import Level
from dpviz.figures.mechanisms import INTERVAL_TABLE, route_table
from dpviz.figures.tables import table_csv, table_rows
from dpviz.mechanisms import heterogeneous as het
from dpviz.mechanisms import registry, routes
from dpviz.params import Param
from dpviz.results import intervals_json
from dpviz.validation import ParameterError
from dpviz.views import View
from dpviz.views.mechanism_routes import best

MIX_COLUMNS = ("mechanism", "parameters", "count", "sampling rate", "neighbouring")
"""Columns of the page's mix table: one row per mechanism of a heterogeneous run."""

MIX = Param("mix", "mechanism mix (JSON, as `python -m dpviz mechanism mix --spec` reads it)",
            '[{"mechanism":"gaussian","sigma":1.1,"count":1000,"sampling_rate":0.01},'
            '{"mechanism":"laplace","scale":2,"count":10},'
            '{"mechanism":"randomized-response","eps0":0.5,"count":5}]',
            str, "A JSON list of {mechanism, its parameters, count, sampling_rate (optional), neighbouring "
                 "(optional)}: the inline spec of `mechanism mix --spec`.")
MAX_MIX_ROWS = 50
"""Most rows the page's mix table takes (the CLI's limit is larger)."""


def _cell(value: object) -> str:
    return "" if value is None else (json.dumps(value) if not isinstance(value, str) else value)


def _typed(text: str) -> Any:
    """A cell as the JSON value a person means: a number when it reads as one, else the text."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, int | float) and not isinstance(value, bool) else text


def mix_rows(text: str) -> list[dict[str, str]]:
    """The mix spec (JSON, ``MIX``) as editor rows of text cells (``MIX_COLUMNS``); a
    ``ParameterError`` naming ``mix`` when it is not a list of objects with a mechanism."""
    allowed = 'a JSON list of objects such as {"mechanism": "laplace", "scale": 2, "count": 10}'
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise ParameterError("mix", text[:60], allowed) from None
    if not isinstance(data, list) or not 1 <= len(data) <= MAX_MIX_ROWS or \
            not all(isinstance(e, dict) for e in data):
        raise ParameterError("mix", text[:60], f"{allowed}, 1 to {MAX_MIX_ROWS} of them")
    rows = []
    for entry in data:
        rest = {k: v for k, v in entry.items()
                if k not in ("mechanism", "count", "sampling_rate", "neighbouring")}
        rows.append({"mechanism": _cell(entry.get("mechanism")),
                     "parameters": "; ".join(f"{k}={_cell(v)}" for k, v in rest.items()),
                     "count": _cell(entry.get("count")), "sampling rate": _cell(entry.get("sampling_rate")),
                     "neighbouring": _cell(entry.get("neighbouring"))})
    return rows


def mix_entries(rows: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]:
    """Editor rows as the JSON entries of a mix spec (empty rows skipped; the parameters cell
    ``key=value; key=value``); a ``ParameterError`` naming the row and column of a malformed cell."""
    entries = []
    for i, row in enumerate(rows):
        cells = {c: str(row.get(c) or "").strip() for c in MIX_COLUMNS}
        if not any(cells.values()):
            continue
        entry: dict[str, Any] = {"mechanism": cells["mechanism"]}
        for item in filter(None, (s.strip() for s in cells["parameters"].split(";"))):
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ParameterError(f"mix[{i}].parameters", item, "key=value pairs separated by ;")
            entry[key.strip()] = _typed(value.strip())
        entry["count"] = _typed(cells["count"]) if cells["count"] else None
        if cells["sampling rate"]:
            entry["sampling_rate"] = _typed(cells["sampling rate"])
        if cells["neighbouring"]:
            entry["neighbouring"] = cells["neighbouring"]
        entries.append(entry)
    return entries


def mix_spec(rows: Sequence[Mapping[str, str]]) -> str:
    """Editor rows as the compact JSON spec (the URL value and the CLI's ``--spec``)."""
    return json.dumps(mix_entries(rows), ensure_ascii=False, separators=(",", ":"))


def mix_parts(entries: Sequence[Mapping[str, Any]]) -> list[tuple[Any, int]]:
    """(mechanism, count) for each entry, by the parser ``python -m dpviz mechanism mix --spec``
    uses (``registry.parts``): a ``ParameterError`` names the entry and the field, e.g. ``mix[1].scale``."""
    return registry.parts([dict(e) for e in entries], field="mix")


def mix_view(spec: str, *, delta: float | None = None, epsilon: float | None = None,
             budget: Budget = budgets.PAGE) -> View:
    """Every route for the mix ``spec`` (``MIX``): the table and the best bounds, as the CLI's
    ``mechanism mix`` computes them."""
    parts = mix_parts(mix_entries(mix_rows(spec)))
    results = routes.routes(parts, delta=delta, epsilon=epsilon, budget=budget, compare=True)
    solve = "delta" if epsilon is not None else "epsilon"
    columns = route_table(solve)
    summary = best(results)
    payload = {"view": "mechanisms mix", "spec": json.loads(spec), "solve": solve, "delta": delta,
               "epsilon": epsilon, "best": summary,
               "results": intervals_json(results)}
    return View(figures={}, payload=payload, summary=summary, tables={"mix": table_rows(results, columns)},
                csv={"mix": table_csv(results, columns)})


def heterogeneous(rows: list[dict[str, Any]], *, delta: float,
                  budget: Budget = budgets.PAGE) -> list[dict[str, str]]:
    """Table for the (ε_i, δ_i, count) editor: exact (few levels), PLD, KOV Thm 3.5, each within
    ``budget`` (default: the page's)."""
    levels = []
    for i, row in enumerate(rows, start=1):
        if all(row.get(c) in (None, "") for c in ("ε", "δ", "count")):
            continue
        try:
            levels.append(Level(epsilon=cast(float, row.get("ε")), delta=cast(float, row.get("δ")),
                                count=cast(int, row.get("count"))))  # Level checks each value
        except ParameterError as exc:
            raise ParameterError(f"{exc.field} (row {i})", exc.value, exc.allowed) from None
    return table_rows(het.compare(as_levels(levels), delta=delta, budget=budget), INTERVAL_TABLE)

