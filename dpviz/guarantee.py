"""The one result type of dpviz: a privacy guarantee, what it is, and where it comes from.

Every accounting route (composition theorems, the GCE bounds, the PLD and the other
mechanism routes) answers with a :class:`Guarantee`:

- ``epsilon``, ``delta``: the pair the route states (for an ``UPPER`` or ``EXACT`` result the
  mechanism is (ε, δ)-DP; for a ``LOWER`` one it is not (ε′, δ)-DP for any ε′ < ε). ``delta`` is
  always the δ the statement holds at: when ε was solved for a target δ it is the δ the route
  proves for that ε, which is never above the target and may be below it (basic composition
  states Σδ_i; the exact optimum states δ(ε) of the ε it returns; advanced composition and the
  KOV closed forms spend the whole target). Both are Python floats or ``None``, never arrays
  or tuples;
- ``solved``: which of the two was computed ("epsilon": ε at a given δ; "delta": δ at a given ε);
- ``lower``, ``upper``: the certified bracket of the solved quantity (``lower ≤ truth ≤ upper``);
  filled from the kind when not given (``EXACT``: both; ``UPPER``: upper; ``LOWER``: lower);
- ``status``: ``OK``, ``IMPOSSIBLE`` (proven: no finite value meets the target by this route —
  δ below the mass at infinite loss, or a theorem that states nothing there, e.g. basic
  composition once kδ0 > δ; asking again with more time would not help) or ``NOT_COMPUTED``
  (the route could give a value but did not compute it here: too large, over budget, outside
  its numerical range); ``reason`` says why. A result without a value has kind ``INFEASIBLE``;
- ``directions``: the direction(s) of HBW Def. 3 a database-prior bound is proved for;
- ``note``, ``detail``, ``seconds``: short remarks for users, technical detail (grid width…),
  wall time.

``None`` always means "no value"; an infinite ε is ``math.inf`` with status ``OK`` only when it is
the exact answer (the Gaussian at δ = 0). :class:`DeltaCurve` is the vectorised form: δ(ε) over
an array of ε with its lower and upper ends. Rounding directions: docs/MATH.md §10.3.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

Direction = Literal["both", "forward", "reverse"]
Solved = Literal["epsilon", "delta"]

DIRECTION_TEXT: dict[str, str] = {
    "both": "both (Def. 3 in full)",
    "forward": "forward only: prior ≤ e^ε·null + δ",
    "reverse": "reverse only: null ≤ e^ε·prior + δ",
}
"""HBW Def. 3 asks for two inequalities. With p0 the "null" hypothesis (e.g. 0⃗) and p1 the
membership prior, *forward* is E_{p1}[Pr(V^b ∈ S)] ≤ e^ε E_{p0}[Pr(V^b ∈ S)] + δ and *reverse*
the same with p0 and p1 exchanged. A classic DP guarantee, and every exact two-sided value, is
proved for "both"."""


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
        for name in ("epsilon", "delta", "lower", "upper"):
            v = getattr(self, name)
            if v is not None and type(v) is not float:  # a float is kept as it is (float(v) is v)
                if isinstance(v, bool) or not isinstance(v, numbers.Real):
                    raise TypeError(f"Guarantee.{name} must be a float or None, got {type(v).__name__}")
                object.__setattr__(self, name, float(v))
        if self.kind is Kind.INFEASIBLE and self.status is Status.OK:
            object.__setattr__(self, "status", Status.NOT_COMPUTED)
        if self.status is not Status.OK:
            object.__setattr__(self, "kind", Kind.INFEASIBLE)
            return
        value = self.epsilon if self.solved == "epsilon" else self.delta
        if value is None:
            return
        if self.lower is None and (self.kind is Kind.EXACT or self.kind is Kind.LOWER):
            object.__setattr__(self, "lower", value)
        if self.upper is None and (self.kind is Kind.EXACT or self.kind is Kind.UPPER):
            object.__setattr__(self, "upper", value)

    # ------------------------------------------------------------------ reading
    @property
    def feasible(self) -> bool:
        """A value was given (``status`` OK and both numbers present)."""
        return self.status is Status.OK and self.epsilon is not None and self.delta is not None

    def with_directions(self, directions: Direction, note: str = "") -> Guarantee:
        """The same statement labelled with the direction(s) of HBW Def. 3 it is proved for."""
        return replace(self, directions=directions, note=note)

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
    def no_value(cls, status: Status, *, source: str, reason: str, epsilon: float | None = None,
                 delta: float | None = None, solved: Solved = "epsilon",
                 directions: Direction = "both") -> Guarantee:
        """No value, with ``status`` IMPOSSIBLE or NOT_COMPUTED (e.g. the status of a term it follows
        from); ``reason`` says why."""
        return cls(epsilon=epsilon, delta=delta, kind=Kind.INFEASIBLE, source=source, reason=reason,
                   status=status, solved=solved, directions=directions)

    @classmethod
    def impossible(cls, *, source: str, reason: str, epsilon: float | None = None,
                   delta: float | None = None, solved: Solved = "epsilon",
                   directions: Direction = "both") -> Guarantee:
        """Proven: no finite value meets the target (``reason`` says why)."""
        return cls.no_value(Status.IMPOSSIBLE, source=source, reason=reason, epsilon=epsilon, delta=delta,
                            solved=solved, directions=directions)

    @classmethod
    def not_computed(cls, *, source: str, reason: str, epsilon: float | None = None,
                     delta: float | None = None, solved: Solved = "epsilon",
                     directions: Direction = "both") -> Guarantee:
        """The route could not compute a value here (``reason`` says why: size, budget, range)."""
        return cls.no_value(Status.NOT_COMPUTED, source=source, reason=reason, epsilon=epsilon,
                            delta=delta, solved=solved, directions=directions)

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict; non-finite numbers become ``None``. ``status`` and ``directions``
        always; the bracket (``lower``, ``upper``) when it says more than the value; ``reason``,
        ``detail``, ``note`` when present."""
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
        if self.reason:
            out["reason"] = self.reason
        if self.detail:
            out["detail"] = self.detail
        out["directions"] = self.directions
        if self.note:
            out["note"] = self.note
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
    impossible: NDArray[np.bool_] | None = None
    """Where the NaN points are proven impossible (else: not computed); ``None``: none are."""

    @classmethod
    def pointwise(cls, points: Sequence[Guarantee], epsilons: NDArray[np.float64], *,
                  source: str) -> DeltaCurve:
        """A curve from one δ-solved :class:`Guarantee` per ε: the weakest kind among the points
        with a value (``UPPER`` unless all are ``EXACT``), NaN where a point has none."""
        eps = np.asarray(epsilons, dtype=float)
        nan = float("nan")
        upper = np.array([g.upper if g.feasible and g.upper is not None else nan for g in points],
                         dtype=float)
        lower = np.array([g.lower if g.feasible and g.lower is not None else nan for g in points],
                         dtype=float)
        ok = [g for g in points if g.feasible]
        kinds = {g.kind for g in ok}
        kind = kinds.pop() if len(kinds) == 1 else Kind.UPPER
        sources = list(dict.fromkeys(g.source for g in ok)) or [source]
        reasons = [g.reason for g in points if not g.feasible and g.reason]
        return cls(epsilon=eps, lower=lower, upper=upper, kind=kind,
                   source=sources[0] if len(sources) == 1 else "; ".join(sources),
                   reason=reasons[0] if reasons else None,
                   impossible=np.array([g.status is Status.IMPOSSIBLE for g in points], dtype=bool))

    @classmethod
    def bounds(cls, epsilons: NDArray[np.float64], deltas: Sequence[float | None], *, kind: Kind,
               source: str, reason: str) -> DeltaCurve:
        """The curve :meth:`pointwise` makes of one δ-solved :class:`Guarantee` per ε, each of ``kind``
        (``UPPER`` or ``EXACT``) from ``source``, or impossible for ``reason`` where ``deltas`` has
        ``None``, without making the Guarantees (160 a curve, 10 µs each)."""
        eps = np.asarray(epsilons, dtype=float)
        upper = np.array([math.nan if d is None else d for d in deltas], dtype=float)
        impossible = np.array([d is None for d in deltas], dtype=bool)
        lower = upper.copy() if kind is Kind.EXACT else np.full(eps.size, math.nan)
        return cls(epsilon=eps, lower=lower, upper=upper, kind=kind, source=source,
                   reason=reason if impossible.any() else None, impossible=impossible)

    def at(self, i: int) -> Guarantee:
        """The i-th point as a :class:`Guarantee` (δ solved at ε)."""
        up, lo = float(self.upper[i]), float(self.lower[i])
        if math.isnan(up):
            make = Guarantee.impossible if self.impossible is not None and self.impossible[i] \
                else Guarantee.not_computed
            return make(source=self.source, reason=self.reason or "no value",
                        epsilon=float(self.epsilon[i]), solved="delta")
        return Guarantee(epsilon=float(self.epsilon[i]), delta=up, kind=self.kind, source=self.source,
                         lower=None if math.isnan(lo) else lo, upper=up, solved="delta")


def finite_or_none(x: float | None) -> float | None:
    """A float for JSON: ``None`` for no value, ±inf or NaN."""
    if x is None or not math.isfinite(x):
        return None
    return float(x)
