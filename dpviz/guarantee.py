"""A privacy guarantee together with what it is and where it comes from."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Kind(str, Enum):
    """How a number relates to the truth it describes."""

    EXACT = "exact"  # equal to the optimum (up to floating point)
    UPPER = "upper"  # a sound upper bound: never below the truth
    LOWER = "lower"  # a lower bound on the truth
    INFEASIBLE = "infeasible"  # no value for this target, or none computed (``reason`` says which)


@dataclass(frozen=True)
class Guarantee:
    """An (ε, δ) pair with its kind and its source, e.g. ``"KOV Thm 3.3"``.

    ``epsilon`` or ``delta`` is ``None`` where the method gives no value for the
    target; ``reason`` then says why in words fit for a user.
    """

    epsilon: float | None
    delta: float | None
    kind: Kind
    source: str
    reason: str | None = None

    @property
    def feasible(self) -> bool:
        return self.kind is not Kind.INFEASIBLE and self.epsilon is not None and self.delta is not None

    @classmethod
    def infeasible(cls, *, source: str, reason: str, epsilon: float | None = None,
                   delta: float | None = None) -> Guarantee:
        return cls(epsilon=epsilon, delta=delta, kind=Kind.INFEASIBLE, source=source, reason=reason)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict; non-finite numbers become ``None``."""
        out: dict[str, Any] = {
            "epsilon": finite_or_none(self.epsilon),
            "delta": finite_or_none(self.delta),
            "kind": self.kind.value,
            "source": self.source,
        }
        if self.reason:
            out["reason"] = self.reason
        return out


def finite_or_none(x: float | None) -> float | None:
    """A float for JSON: ``None`` for no value, ±inf or NaN."""
    if x is None or not math.isfinite(x):
        return None
    return float(x)
