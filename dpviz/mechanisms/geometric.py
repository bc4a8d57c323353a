"""Geometric (discrete Laplace) mechanism: integer noise with P(Z = z) ∝ e^{−ε0 |z|}.

On a query of integer sensitivity Δ, P = Z and Q = Z + Δ give L(x) = ε0(|x − Δ| − |x|)
∈ {−Δε0, (2 − Δ)ε0, …, Δε0}. For Δ = 1 the law is the randomized-response law
(atoms ±ε0 with P-masses e^{ε0}/(1+e^{ε0}) and 1/(1+e^{ε0})), which is why KOV §4.2
(seed 004) can use the geometric mechanism to attain the optimal composed region.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from dpviz.mechanisms.base import Mechanism
from dpviz.params import Param
from dpviz.pld.law import LossLaw
from dpviz.validation import check_count, check_epsilon, check_positive


def loss_law(*, eps0: float, sensitivity: float = 1) -> LossLaw:
    e0 = check_epsilon(eps0, field="eps0")
    if e0 == 0:
        from dpviz.validation import ParameterError
        raise ParameterError("eps0", eps0, "a number in (0, 100]")
    d = check_count(sensitivity, field="sensitivity", maximum=10_000)
    a = math.exp(-e0)
    norm = (1.0 - a) / (1.0 + a)  # P(Z = z) = norm · a^{|z|}
    # x ≤ 0: loss Δε0, P-mass Σ_{x≤0} norm a^{|x|} = 1/(1+a); x ≥ Δ: loss −Δε0, mass a^Δ/(1+a);
    # 0 < x < Δ: loss ε0(Δ − 2x), mass norm a^x.
    xs = np.arange(1, d)
    loss = np.concatenate([[d * e0], e0 * (d - 2.0 * xs), [-d * e0]])
    p = np.concatenate([[1.0 / (1.0 + a)], norm * a**xs, [a**d / (1.0 + a)]])
    q = p[::-1].copy()  # Q = Z + Δ mirrors P about Δ/2: Q-mass at loss ℓ = P-mass at −ℓ (no e^{−ℓ} overflow)
    return LossLaw.from_atoms(f"Geometric ε0={e0:g}, Δ={d}", loss, p, q, symmetric=True)


class Geometric(Mechanism):
    """The geometric (discrete Laplace) mechanism e^{−ε0|z|} on an integer query of sensitivity Δ."""

    key = "geometric"
    title = "Geometric (discrete Laplace)"
    required = ("eps0",)
    finite = True
    params = (
        Param("eps0", "ε0", 0.1, partial(check_positive, field="eps0", maximum=100.0),
              "ε0 of the geometric (discrete Laplace) noise, e^{−ε0|z|}"),
        Param("sensitivity", "sensitivity Δ", 1, partial(check_count, field="sensitivity", maximum=10_000),
              "integer query sensitivity Δ (default 1)"),
    )

    def loss_law(self) -> LossLaw:
        return loss_law(eps0=self.eps0, sensitivity=self.sensitivity)

    @property
    def grid_unit(self) -> float | None:
        return self.eps0

    @property
    def max_loss(self) -> float | None:
        return self.eps0 * self.sensitivity

    @property
    def canonical_pair(self) -> tuple[float, float] | None:
        return (self.eps0, 0.0) if self.sensitivity == 1 else None
