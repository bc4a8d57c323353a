"""Tables of guarantees as rows of display strings (what a person reads)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dpviz.guarantee import Guarantee


def format_number(x: float | None, digits: int = 6) -> str:
    """A number for tables: significant digits, '—' for no value."""
    if x is None or not np.isfinite(x):
        return "—"
    return f"{x:.{digits}g}"


def guarantee_rows(results: Mapping[str, Guarantee], labels: Mapping[str, str]) -> list[dict[str, str]]:
    """Rows: method, ε, δ, kind, source (the reason instead where infeasible)."""
    return [{"method": labels.get(key, key),
             "ε": format_number(g.epsilon) if g.feasible else "—",
             "δ": format_number(g.delta, 4) if g.feasible else "—",
             "kind": g.kind.value,
             "source / note": g.source if g.feasible else f"{g.source}: {g.reason}"}
            for key, g in results.items()]
