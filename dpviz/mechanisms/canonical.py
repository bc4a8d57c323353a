"""The canonical (ε0, δ0) pair (KOV eq. 16, proof of Thm 3.3), seed 004.

P~ = (δ0, (1−δ0)e^{ε0}/(1+e^{ε0}), (1−δ0)/(1+e^{ε0}), 0),
Q~ = (0, (1−δ0)/(1+e^{ε0}), (1−δ0)e^{ε0}/(1+e^{ε0}), δ0):
losses +∞, +ε0, −ε0, −∞. Every (ε0, δ0)-DP mechanism is a post-processing of it, so its
composition is the exact worst case (KOV Thm 3.3).
"""

from __future__ import annotations

import math

import numpy as np

from dpviz.pld.law import LossLaw
from dpviz.validation import check_delta, check_epsilon


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
