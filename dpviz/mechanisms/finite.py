"""An arbitrary finite pair (P, Q) given as two probability vectors over the same outcomes."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

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
