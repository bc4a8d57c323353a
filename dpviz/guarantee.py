"""The one result type of dpviz: a privacy guarantee, what it is, and where it comes from.

Every accounting route (composition theorems, the GCE bounds, the PLD and the other
mechanism routes) answers with a :class:`Guarantee`:

- ``epsilon``, ``delta``: the pair the route states (for an ``UPPER`` or ``EXACT`` result the
  mechanism is (ε, δ)-DP; for a ``LOWER`` one it is not (ε′, δ)-DP for any ε′ < ε);
- ``solved``: which of the two was computed ("epsilon": ε at a given δ; "delta": δ at a given ε);
- ``lower``, ``upper``: the certified bracket of the solved quantity (``lower ≤ truth ≤ upper``);
  filled from the kind when not given (``EXACT``: both; ``UPPER``: upper; ``LOWER``: lower);
- ``status``: ``OK``, ``IMPOSSIBLE`` (proven: no finite value meets the target, e.g. δ below the
  mass at infinite loss, or basic composition once kδ0 > δ) or ``NOT_COMPUTED`` (the route could
  not compute it here: too large, over budget, outside its numerical range); ``reason`` says why;
- ``directions``: the direction(s) of HBW Def. 3 a database-prior bound is proved for;
- ``note``, ``detail``, ``seconds``: short remarks for users, technical detail (grid width…),
  wall time.

``None`` always means "no value"; an infinite ε is ``math.inf`` with status ``OK`` only when it is
the exact answer (the Gaussian at δ = 0). :class:`DeltaCurve` is the vectorised form: δ(ε) over
an array of ε with its lower and upper ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

Direction = Literal["both", "forward", "reverse"]
Solved = Literal["epsilon", "delta"]


class Kind(str, Enum):
    """How a number relates to the truth it describes."""

    EXACT = "exact"  # equal to the optimum (up to floating point)
    UPPER = "upper"  # a sound upper bound: never below the truth
    LOWER = "lower"  # a lower bound on the truth
    INFEASIBLE = "infeasible"  # no value (``status`` says whether impossible or not computed)


class Status(str, Enum):
    """Whether a route gave a value, and if not, why not."""

    OK = "ok"
    IMPOSSIBLE = "impossible"  # proven: no finite value meets the target
    NOT_COMPUTED = "not_computed"  # the route could not compute it here (size, budget, range)


@dataclass(frozen=True)
class Guarantee:
    """An (ε, δ) statement with its kind, bracket, status and source, e.g. ``"KOV Thm 3.3"``
    (module docstring)."""

    epsilon: float | None
    delta: float | None
    kind: Kind
    source: str
    reason: str | None = None
    status: Status = Status.OK
    lower: float | None = None
    upper: float | None = None
    solved: Solved = "epsilon"
    directions: Direction = "both"
    note: str = ""
    detail: str = ""
    seconds: float | None = None

    def __post_init__(self) -> None:
        if self.kind is Kind.INFEASIBLE and self.status is Status.OK:
            object.__setattr__(self, "status", Status.NOT_COMPUTED)
        if self.status is not Status.OK:
            object.__setattr__(self, "kind", Kind.INFEASIBLE)
            return
        value = self.epsilon if self.solved == "epsilon" else self.delta
        if value is None:
            return
        if self.lower is None and self.kind in (Kind.EXACT, Kind.LOWER):
            object.__setattr__(self, "lower", value)
        if self.upper is None and self.kind in (Kind.EXACT, Kind.UPPER):
            object.__setattr__(self, "upper", value)

    # ------------------------------------------------------------------ reading
    @property
    def feasible(self) -> bool:
        """A value was given (``status`` OK and both numbers present)."""
        return self.status is Status.OK and self.epsilon is not None and self.delta is not None

    @property
    def value(self) -> float | None:
        """The solved quantity as stated (ε for ``solved == "epsilon"``, else δ)."""
        return self.epsilon if self.solved == "epsilon" else self.delta

    @property
    def width(self) -> float | None:
        """``upper − lower`` of the solved quantity, or ``None`` without both ends."""
        if self.lower is None or self.upper is None:
            return None
        return self.upper - self.lower

    @property
    def relative_width(self) -> float | None:
        w = self.width
        if w is None or self.upper is None:
            return None
        return w / self.upper if self.upper > 0 else 0.0

    # ------------------------------------------------------------------ making
    @classmethod
    def impossible(cls, *, source: str, reason: str, epsilon: float | None = None,
                   delta: float | None = None, solved: Solved = "epsilon",
                   directions: Direction = "both") -> Guarantee:
        """Proven: no finite value meets the target (``reason`` says why)."""
        return cls(epsilon=epsilon, delta=delta, kind=Kind.INFEASIBLE, source=source, reason=reason,
                   status=Status.IMPOSSIBLE, solved=solved, directions=directions)

    @classmethod
    def not_computed(cls, *, source: str, reason: str, epsilon: float | None = None,
                     delta: float | None = None, solved: Solved = "epsilon",
                     directions: Direction = "both") -> Guarantee:
        """The route could not compute a value here (``reason`` says why: size, budget, range)."""
        return cls(epsilon=epsilon, delta=delta, kind=Kind.INFEASIBLE, source=source, reason=reason,
                   status=Status.NOT_COMPUTED, solved=solved, directions=directions)

    @classmethod
    def infeasible(cls, *, source: str, reason: str, epsilon: float | None = None,
                   delta: float | None = None) -> Guarantee:
        """Legacy spelling of :meth:`impossible` (being replaced by the two explicit constructors)."""
        return cls.impossible(source=source, reason=reason, epsilon=epsilon, delta=delta)

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict; non-finite numbers become ``None``. ``status`` always; the bracket
        (``lower``, ``upper``) when it says more than the value; ``directions`` when not "both";
        ``reason``, ``note``, ``detail`` when present."""
        out: dict[str, Any] = {
            "epsilon": finite_or_none(self.epsilon),
            "delta": finite_or_none(self.delta),
            "kind": self.kind.value,
            "source": self.source,
            "status": self.status.value,
        }
        if self.status is Status.OK and self.kind is not Kind.EXACT and (
                self.lower is not None and self.upper is not None):
            out["lower"] = finite_or_none(self.lower)
            out["upper"] = finite_or_none(self.upper)
        if self.directions != "both":
            out["directions"] = self.directions
        if self.reason:
            out["reason"] = self.reason
        if self.note:
            out["note"] = self.note
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True)
class DeltaCurve:
    """δ(ε) over an array of ε: ``lower ≤ truth ≤ upper`` pointwise; NaN where not computed."""

    epsilon: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    kind: Kind
    source: str
    reason: str | None = None

    def at(self, i: int) -> Guarantee:
        """The i-th point as a :class:`Guarantee` (δ solved at ε)."""
        up, lo = float(self.upper[i]), float(self.lower[i])
        if math.isnan(up):
            return Guarantee.not_computed(source=self.source, reason=self.reason or "not computed",
                                          epsilon=float(self.epsilon[i]), solved="delta")
        return Guarantee(epsilon=float(self.epsilon[i]), delta=up, kind=self.kind, source=self.source,
                         lower=None if math.isnan(lo) else lo, upper=up, solved="delta")


def finite_or_none(x: float | None) -> float | None:
    """A float for JSON: ``None`` for no value, ±inf or NaN."""
    if x is None or not math.isfinite(x):
        return None
    return float(x)
