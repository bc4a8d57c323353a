"""Tables of results as rows of display strings (what a person reads) and as CSV columns.

Every table of every page is built by ``table_rows`` from a list of ``Column``s: tables differ in the
columns they choose, not in code. A column gives the full-precision value (the CSV's, ``table_csv``)
and its display (rounded: upper bounds up, lower bounds down, ``format_number``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from enum import Enum
from typing import Any, Generic, TypeVar

from dpviz.guarantee import Status
from dpviz.results import Answer

NO_VALUE = "—"
"""A cell without a value (infeasible, over budget, not finite)."""

ULPS = 4
"""A value within this many units in the last place of its rounded display shows as that display
(3 × 0.1 = 0.30000000000000004 reads 0.3, not 0.300001): far below any bound's own rounding."""


def format_number(x: float | None, digits: int = 6, *, down: bool = False) -> str:
    """A number for tables with ``digits`` significant digits, '—' for no value, rounded up
    (towards +∞) where rounding to nearest would show less than the value: an upper bound, and the
    ε and δ of every guarantee, is never shown below what was computed (beyond ``ULPS``). A lower
    bound (``down``) is rounded down instead: never shown above what was computed."""
    if x is None or not math.isfinite(x):
        return NO_VALUE
    text = f"{x:.{digits}g}"
    slack = ULPS * math.ulp(x)
    if (float(text) <= x + slack) if down else (float(text) >= x - slack):
        return text
    exact = Decimal(x)  # the float's exact binary value
    quantum = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    rounded = exact.quantize(quantum, rounding=ROUND_FLOOR if down else ROUND_CEILING)
    return f"{float(rounded):.{digits}g}"


KIND_WORDS = ("exact", "upper", "lower", "impossible", "not computed")
"""The words a table's *kind* column uses: the README's, one per value or per missing value."""


def kind_word(r: Answer) -> str:
    """What a value is (exact, upper, lower) or, without one, why: impossible (no finite value
    exists) or not computed (over the budget, out of a route's range)."""
    if r.feasible:
        return _code(r.kind)
    return "impossible" if r.status is Status.IMPOSSIBLE else "not computed"


def _code(v: Any) -> Any:
    """An enum's value (``Kind.UPPER`` → "upper"), anything else as it is."""
    return v.value if isinstance(v, Enum) else v


def table_number(text: str) -> float | None:
    """A display cell read back as the number it shows (None for '—'); ValueError for text."""
    return None if text == NO_VALUE else float(text)


# ---------------------------------------------------------------------- one row builder
R = TypeVar("R")
"""A row's object: a result (``dpviz.results.Result``), or what a table shows in its place."""


@dataclass(frozen=True)
class Column(Generic[R]):
    """One column of a table of results (``dpviz.results.Result``): its header on the page (None:
    CSV only), its name in the CSV (None: display only), the cell's value at full precision (a
    number, or text) and how it is displayed. The CSV holds the value and the page ``show(value)``,
    so a table's download and its display agree by construction."""

    header: str | None
    csv: str | None
    get: Callable[[str, R], Any]
    """(key, result) → the cell's value; None for no value."""
    show: Callable[[Any], str] = str


def table_rows(results: Mapping[str, R], columns: Sequence[Column[R]]) -> list[dict[str, str]]:
    """The rows a page shows: one per result, the displayed cell of each column with a header."""
    return [{c.header: c.show(c.get(key, r)) for c in columns if c.header is not None}
            for key, r in results.items()]


def table_csv(results: Mapping[str, R], columns: Sequence[Column[R]]) -> dict[str, list[Any]]:
    """The same table as CSV columns: each value at full precision (never rounded: an upper bound
    read from a download must not come out below the computed one), None where there is none."""
    return {c.csv: [c.get(key, r) for key, r in results.items()] for c in columns if c.csv is not None}


def number(digits: int = 6, *, down: bool = False) -> Callable[[Any], str]:
    """Display of a number (``format_number``): upper bounds and statements rounded up, lower
    bounds (``down``) rounded down."""
    return lambda x: format_number(x, digits, down=down)


def label_column(header: str, labels: Mapping[str, str], *, csv: str | None = None) -> Column[Any]:
    """The row's name on the page (its label; the key when it has none); in the CSV, ``csv``."""
    return Column(header, csv, lambda key, r: labels.get(key, key))


def key_column(csv: str) -> Column[Any]:
    """The row's key, in the CSV only (``route``, ``method``, ``bound``: the CLI's names)."""
    return Column(None, csv, lambda key, r: key)


def kind_column(header: str | None = "kind", *, csv: str | None = None) -> Column[Any]:
    """What a value is (exact, upper, lower) or, without one, why (``kind_word``)."""
    return Column(header, csv, lambda key, r: kind_word(r))


def raw_column(csv: str, attr: str) -> Column[Any]:
    """An attribute of the result as it is, in the CSV only (``kind``, ``status``: their codes)."""
    def get(key: str, r: Any) -> Any:
        v = _code(getattr(r, attr))
        return None if v == "" else v
    return Column(None, csv, get)


def value_column(header: str, csv: str | None, attr: str, digits: int = 6) -> Column[Any]:
    """The stated ε or δ (``attr``) of a result with a value, rounded up (a statement's numbers
    are never shown below what was computed); '—' without one."""
    return Column(header, csv, lambda key, r: getattr(r, attr) if r.feasible else None, number(digits))


def end_column(header: str, csv: str | None, end: str, digits: int = 8) -> Column[Any]:
    """The lower (rounded down) or upper (rounded up) end of an interval with status OK."""
    def get(key: str, r: Any) -> Any:
        return getattr(r, end) if r.status is Status.OK else None
    return Column(header, csv, get, number(digits, down=end == "lower"))


def width_column(header: str = "width", csv: str | None = None) -> Column[Any]:
    """upper − lower of an interval with status OK (three digits: how certain, not a bound)."""
    return Column(header, csv, lambda key, r: r.width if r.status is Status.OK else None, number(3))


def time_column(header: str = "time (ms)", csv: str | None = None) -> Column[Any]:
    """The route's wall time, in milliseconds on the page and seconds in the CSV."""
    return Column(header, csv, lambda key, r: r.seconds, lambda s: f"{(s or 0.0) * 1e3:.1f}")


def source_column(header: str = "source / note", *, csv: str | None = None,
                  with_note: bool = False) -> Column[Any]:
    """The source, or with no value the source and why; ``with_note``: the note after a dash."""
    def get(key: str, r: Any) -> str:
        text = r.source if r.feasible else f"{r.source}: {r.reason}"
        return f"{text} — {r.note}" if with_note and r.feasible and r.note else text
    return Column(header, csv, get)


def note_column(header: str = "note", *, csv: str | None = None, why: bool = True, note: bool = True,
                meaning: Mapping[str, str] | None = None) -> Column[Any]:
    """Source; what a row means (``meaning``, by key); the reason, prefixed with the status
    (``why``); the note (``note``); the technical detail; joined by semicolons."""
    def get(key: str, r: Any) -> str:
        prefix = {Status.IMPOSSIBLE: "impossible: ", Status.NOT_COMPUTED: "not computed: "}.get(r.status, "")
        reason = f"{prefix if why else ''}{r.reason}" if r.reason else ""
        parts = (r.source, (meaning or {}).get(key, ""), reason, r.note if note else "", r.detail)
        return "; ".join(x for x in parts if x)
    return Column(header, csv, get)


def value_table(labels: Mapping[str, str], *, label: str = "method") -> tuple[Column[Any], ...]:
    """A table of statements: method, ε, δ, kind, source (the reason instead where infeasible)."""
    return (label_column(label, labels), value_column("ε", None, "epsilon"),
            value_column("δ", None, "delta", 4), kind_column(), source_column())
