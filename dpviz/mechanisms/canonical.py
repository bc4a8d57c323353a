"""The canonical (ε0, δ0) pair (KOV eq. 16, proof of Thm 3.3), seed 004.

P~ = (δ0, (1−δ0)e^{ε0}/(1+e^{ε0}), (1−δ0)/(1+e^{ε0}), 0),
Q~ = (0, (1−δ0)/(1+e^{ε0}), (1−δ0)e^{ε0}/(1+e^{ε0}), δ0):
losses +∞, +ε0, −ε0, −∞. Every (ε0, δ0)-DP mechanism is a post-processing of it, so its
composition is the exact worst case (KOV Thm 3.3).
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from dpviz.guarantee import Guarantee, Kind
from dpviz.mechanisms.base import Mechanism
from dpviz.params import Param
from dpviz.pld.law import LossLaw
from dpviz.validation import check_delta, check_epsilon, check_positive


def loss_law(*, eps0: float, delta0: float = 0.0) -> LossLaw:
    e0 = check_epsilon(eps0, field="eps0")
    d0 = check_delta(delta0, field="delta0")
    hi = (1.0 - d0) / (1.0 + math.exp(-e0))
    lo = (1.0 - d0) / (1.0 + math.exp(e0))
    if e0 == 0:
        return LossLaw.from_atoms(f"Canonical ε0=0, δ0={d0:g}", [0.0], [1.0 - d0], [1.0 - d0],
                                  p_inf=d0, q_neg_inf=d0, symmetric=True)
    return LossLaw.from_atoms(f"Canonical ε0={e0:g}, δ0={d0:g}", np.array([e0, -e0]), np.array([hi, lo]),
                              np.array([lo, hi]), p_inf=d0, q_neg_inf=d0, symmetric=True)


class Canonical(Mechanism):
    """The canonical (ε0, δ0) pair (KOV eq. 16): the worst case among (ε0, δ0)-DP mechanisms."""

    key = "canonical"
    title = "Canonical (ε0, δ0) pair"
    required = ("eps0",)
    finite = True
    attackable = True
    params = (
        Param("eps0", "ε0", 0.1, partial(check_positive, field="eps0", maximum=100.0),
              "ε0 of the canonical pair", span=(1e-3, 20.0)),
        Param("delta0", "δ0", 0.0, partial(check_delta, field="delta0"),
              "δ0 of the canonical pair"),
    )

    def loss_law(self) -> LossLaw:
        return loss_law(eps0=self.eps0, delta0=self.delta0)

    def step_guarantee(self, delta: float) -> Guarantee:
        return Guarantee(epsilon=self.eps0, delta=self.delta0, kind=Kind.UPPER, source="per-step guarantee")

    @property
    def grid_unit(self) -> float | None:
        return self.eps0

    @property
    def canonical_pair(self) -> tuple[float, float] | None:
        return (self.eps0, self.delta0)
