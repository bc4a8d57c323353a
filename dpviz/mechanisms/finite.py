"""An arbitrary finite pair (P, Q) given as two probability vectors over the same outcomes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

import numpy as np

from dpviz.mechanisms.base import Mechanism
from dpviz.params import Param
from dpviz.pld.law import LossLaw
from dpviz.validation import ParameterError

_SUM_TOL = 1e-9  # probability vectors typed by users sum to 1 only up to rounding


def loss_law(*, p: Sequence[float], q: Sequence[float], name: str = "finite pair") -> LossLaw:
    """Loss law of (P, Q); outcomes with Q = 0 go to L = +∞, with P = 0 to L = −∞."""
    pa = np.asarray(p, dtype=float)
    qa = np.asarray(q, dtype=float)
    if pa.ndim != 1 or pa.shape != qa.shape or pa.size == 0:
        raise ParameterError("q", list(q), f"a probability vector of the same length as p ({pa.size})")
    for field, v in (("p", pa), ("q", qa)):
        if not np.all(np.isfinite(v)) or np.any(v < 0) or abs(math.fsum(v) - 1.0) > _SUM_TOL:
            raise ParameterError(field, list(v), "non-negative numbers summing to 1")
    both = (pa > 0) & (qa > 0)
    loss = np.log(pa[both]) - np.log(qa[both])
    p_inf = math.fsum(pa[(pa > 0) & (qa == 0)])
    q_neg = math.fsum(qa[(qa > 0) & (pa == 0)])
    return LossLaw.from_atoms(name, loss, pa[both], qa[both], p_inf=p_inf, q_neg_inf=q_neg)


def parse_vector(value: object, *, field: str) -> tuple[float, ...]:
    """A probability vector typed as ``"0.5,0.3,0.2"`` (or a list); numbers only, 1 to 64 entries."""
    from dpviz.validation import _real

    items = value.split(",") if isinstance(value, str) else list(value)  # type: ignore[call-overload]
    if not 1 <= len(items) <= 64:
        raise ParameterError(field, value, "1 to 64 probabilities separated by commas")
    return tuple(_real(v.strip() if isinstance(v, str) else v, field, "numbers separated by commas")
                 for v in items)


class FinitePair(Mechanism):
    """Any finite pair (P, Q) over the same outcomes."""

    key = "finite"
    title = "Finite pair (P, Q)"
    required = ("p", "q")
    finite = True
    params = (
        Param("p", "P", "0.5,0.5", partial(parse_vector, field="p"), "probabilities of P, e.g. 0.6,0.4"),
        Param("q", "Q", "0.5,0.5", partial(parse_vector, field="q"), "probabilities of Q, e.g. 0.4,0.6"),
    )

    def loss_law(self) -> LossLaw:
        return loss_law(p=self.p, q=self.q)
