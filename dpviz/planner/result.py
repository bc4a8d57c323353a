"""The planner's answer: a planned value with the forward composition that certifies it.

A :class:`Plan` is the largest ε0 (or k, or common factor, or per-database ε0) that fits a total
(ε, δ), or the smallest noise that does, for one method or route. Its ``check`` is the forward
:class:`~dpviz.guarantee.Guarantee` at the returned value (it fits: ε ≤ the target), ``beyond``
the forward guarantee at the next value (ε0 × (1 + 1e-9), k + 1, noise × (1 − 1e-4)), which does
not fit or whose bracket cannot tell. ``kind`` and ``source`` are those of the check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dpviz import budget as budgets
from dpviz.budget import Budget
from dpviz.guarantee import Guarantee, Kind, Status, finite_or_none

EVALUATIONS = 25
"""About how many forward evaluations one planned answer takes: each gets this share of the
budget, so that a whole answer stays within about the budget the caller gave."""


def step_budget(budget: Budget | None) -> Budget:
    """The budget of one forward evaluation of a search (``None``: the command line's)."""
    return budgets.resolve(budget).share(1.0 / EVALUATIONS)

SYMBOLS = {"eps0": "ε0", "sigma": "σ", "scale": "b"}
"""How a planned quantity is written for people."""


@dataclass(frozen=True)
class Plan:
    """A planned value (``name`` = "eps0", "k", "factor", "sigma", "scale") for one method or route."""

    key: str
    name: str
    value: float | None
    check: Guarantee
    target_epsilon: float
    target_delta: float
    beyond_value: float | None = None
    beyond: Guarantee | None = None
    reason: str | None = None
    note: str = ""
    extra: tuple[tuple[str, Any], ...] = ()
    what: str = ""
    """The forward statement checked, e.g. "composing 100 × ε0 = 0.02706" (made from the value
    when empty)."""

    @property
    def feasible(self) -> bool:
        return self.value is not None and self.check.feasible

    @property
    def kind(self) -> Kind:
        return self.check.kind if self.feasible else Kind.INFEASIBLE

    @property
    def source(self) -> str:
        return self.check.source

    @property
    def status(self) -> Status:
        if self.feasible:
            return Status.OK
        return self.check.status if self.check.status is not Status.OK else Status.IMPOSSIBLE

    @property
    def route_is_pld(self) -> bool:
        """Whether a PLD grid certified the answer (the other routes may then be looser)."""
        return dict(self.extra).get("route") == "pld"

    @property
    def beyond_fits(self) -> bool | None:
        """Whether the next value up fits too: False (it does not), None (the bracket cannot
        tell), True (it does; only when the answer is at a search limit)."""
        return fits_state(self.beyond, self.target_epsilon)

    @property
    def check_text(self) -> str:
        """One line: "composing 100 × ε0 = 0.02706 gives ε = 0.99999… ≤ 1 at δ = 1e-05 (…)"."""
        if not self.feasible or self.check.epsilon is None:
            verb = "fits" if self.status is Status.IMPOSSIBLE else "certified"
            return f"no {SYMBOLS.get(self.name, self.name)} {verb}: {self.reason or self.check.reason}"
        eps = self.check.epsilon
        what = self.what or f"{SYMBOLS.get(self.name, self.name)} = {fmt(self.value, 10)}"
        return (f"{what} gives ε = {fmt(eps, 12)} ≤ {fmt(self.target_epsilon)} at δ = "
                f"{fmt(self.check.delta)} ({self.check.kind.value}, {self.check.source})")

    def to_json(self) -> dict[str, Any]:
        value = int(self.value) if self.name == "k" and self.value is not None else self.value
        out: dict[str, Any] = {self.name: _num(value)}
        out.update({k: _num(v) if isinstance(v, float) else v for k, v in self.extra})
        if self.feasible:
            out["total"] = {"epsilon": finite_or_none(self.check.epsilon),
                            "delta": finite_or_none(self.check.delta)}
        out["kind"] = self.kind.value
        out["source"] = self.source
        out["status"] = self.status.value
        if not self.feasible:
            out["reason"] = self.reason or self.check.reason
        if self.beyond is not None and self.beyond_value is not None:
            nxt = int(self.beyond_value) if self.name == "k" else self.beyond_value
            out["next"] = {self.name: _num(nxt), "epsilon": finite_or_none(self.beyond.epsilon),
                           "lower": finite_or_none(self.beyond.lower), "fits": self.beyond_fits}
        out["check"] = self.check_text
        if self.note:
            out["note"] = self.note
        return out


def fits_state(g: Guarantee | None, target: float) -> bool | None:
    """True: the certified upper ε ≤ target; False: the certified lower ε > target (or proven
    impossible); None: the bracket straddles the target or nothing was computed."""
    if g is None:
        return None
    if g.status is Status.IMPOSSIBLE:
        return False
    if g.status is not Status.OK:
        return None
    if g.upper is not None and g.upper <= target:
        return True
    if g.kind is Kind.UPPER and g.lower is None:  # a theorem's bound: above target ⇒ it does not fit
        return False
    if g.lower is not None and g.lower > target:
        return False
    return None


def fmt(x: float | None, digits: int = 7) -> str:
    if x is None:
        return "—"
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return f"{int(x):,}"
    if not math.isfinite(x):
        return "∞"
    return f"{x:.{digits}g}"


def _num(x: Any) -> Any:
    if isinstance(x, float):
        return finite_or_none(x)
    return x
