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
from numpy.typing import NDArray

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
    noise = "eps0"
    more_is_noise = False
    finite = True
    params = (
        Param("eps0", "ε0", 0.1, partial(check_positive, field="eps0", maximum=100.0),
              "ε0 of the geometric (discrete Laplace) noise, e^{−ε0|z|}", span=(1e-3, 20.0)),
        Param("sensitivity", "sensitivity Δ", 1, partial(check_count, field="sensitivity", maximum=10_000),
              "integer query sensitivity Δ", span=(1, 20)),
    )

    def noise_spread(self) -> tuple[str, float] | None:
        """Two-sided geometric noise, P(z) ∝ α^|z| with α = e^{−ε0} (the module's noise, whatever Δ):
        variance 2α/(1−α)²."""
        a = math.exp(-self.eps0)
        return "s.d.", math.sqrt(2.0 * a) / (1.0 - a)

    def loss_law(self) -> LossLaw:
        return loss_law(eps0=self.eps0, sensitivity=self.sensitivity)

    @property
    def grid_unit(self) -> float | None:
        return self.eps0

    def replace_one_law(self, rate: float) -> LossLaw | None:
        """Exact: beyond |x| ≥ Δ every N(x ± Δ)/N(x) is a^{∓Δ} or a^{±Δ}, so the loss is constant
        there and each tail's masses (geometric series) join the atom at x = ±Δ."""
        from dpviz.mechanisms.subsampling import lattice_replace_one

        e0, d = self.eps0, self.sensitivity
        log_norm = math.log(-math.expm1(-e0)) - math.log1p(math.exp(-e0))  # ln (1 − a)/(1 + a)

        def log_noise(x: NDArray[np.float64]) -> NDArray[np.float64]:
            return log_norm - e0 * np.abs(x)

        q = rate
        a_ = math.log1p(-q) if q < 1 else -math.inf
        far = float(np.logaddexp(a_, math.log(q) + d * e0))  # ln((1−q) + q a^{−Δ})
        near = float(np.logaddexp(a_, math.log(q) - d * e0))  # ln((1−q) + q a^{Δ})
        tail = log_norm - (d + 1) * e0 - math.log(-math.expm1(-e0))  # ln Σ_{x ≥ Δ+1} norm a^x
        return lattice_replace_one(log_noise, lo=-d, hi=d, shift=d, rate=rate, name=self.law.name,
                                   lumps=((tail + far, tail + near), (tail + near, tail + far)))

    @property
    def max_loss(self) -> float | None:
        return self.eps0 * self.sensitivity

    @property
    def canonical_pair(self) -> tuple[float, float] | None:
        return (self.eps0, 0.0) if self.sensitivity == 1 else None
