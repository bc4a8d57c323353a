"""Tables of guarantees as rows of display strings (what a person reads)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from dpviz.guarantee import Guarantee, Status

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


def kind_word(g: Guarantee) -> str:
    """What a value is (exact, upper, lower) or, without one, why: impossible (no finite value
    exists) or not computed (over the budget, out of a route's range)."""
    if g.feasible:
        return g.kind.value
    return "impossible" if g.status is Status.IMPOSSIBLE else "not computed"


def table_number(text: str) -> float | None:
    """A display cell read back as the number it shows (None for '—'); ValueError for text."""
    return None if text == NO_VALUE else float(text)


def guarantee_rows(results: Mapping[str, Guarantee], labels: Mapping[str, str]) -> list[dict[str, str]]:
    """Rows: method, ε, δ, kind, source (the reason instead where infeasible)."""
    return [{"method": labels.get(key, key),
             "ε": format_number(g.epsilon) if g.feasible else NO_VALUE,
             "δ": format_number(g.delta, 4) if g.feasible else NO_VALUE,
             "kind": kind_word(g),
             "source / note": g.source if g.feasible else f"{g.source}: {g.reason}"}
            for key, g in results.items()]
