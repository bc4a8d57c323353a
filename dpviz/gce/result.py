"""A hypothesis-DP bound together with the direction(s) of HBW Def. 3 it is proved for.

HBW Def. 3 asks for two inequalities. With p0 the "null" hypothesis (e.g. 0⃗) and p1
the membership prior, *forward* means E_{p1}[Pr(V^b ∈ S)] ≤ e^ε E_{p0}[Pr(V^b ∈ S)] + δ and
*reverse* means the same with p0 and p1 exchanged. A classic DP guarantee, and every
exact two-sided value, is proved for ``"both"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from dpviz.guarantee import Guarantee, Kind

Direction = Literal["both", "forward", "reverse"]

DIRECTION_TEXT: dict[str, str] = {
    "both": "both directions (Def. 3 in full)",
    "forward": "forward only: prior ≤ e^ε·null + δ",
    "reverse": "reverse only: null ≤ e^ε·prior + δ",
}


@dataclass(frozen=True)
class GceBound:
    """A :class:`Guarantee` plus the direction(s) it is proved for, and a short note."""

    guarantee: Guarantee
    directions: Direction = "both"
    note: str = ""

    @property
    def epsilon(self) -> float | None:
        return self.guarantee.epsilon

    @property
    def delta(self) -> float | None:
        return self.guarantee.delta

    @property
    def kind(self) -> Kind:
        return self.guarantee.kind

    @property
    def source(self) -> str:
        return self.guarantee.source

    @property
    def feasible(self) -> bool:
        return self.guarantee.feasible

    def to_json(self) -> dict[str, Any]:
        out = self.guarantee.to_json()
        out["directions"] = self.directions
        if self.note:
            out["note"] = self.note
        return out


def infeasible(*, source: str, reason: str) -> GceBound:
    return GceBound(Guarantee.infeasible(source=source, reason=reason))
