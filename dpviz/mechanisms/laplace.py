"""Laplace mechanism: noise Lap(b) on a query of ℓ1-sensitivity Δ; ε0 = Δ/b (pure ε0-DP).

With P = Lap(0, b) and Q = Lap(Δ, b), L(x) = (|x − Δ| − |x|)/b: an atom at +ε0 (x ≤ 0),
an atom at −ε0 (x ≥ Δ) and a continuous part on (−ε0, ε0) (Steinke, seed 001, §2: the
Laplace PLD is supported on [−ε0, ε0]). Tails, derived from the Laplace CDF:
P(L = ε0) = 1/2, P(L = −ε0) = e^{−ε0}/2, P(ℓ < L < ε0) = (1 − e^{−(ε0−ℓ)/2})/2,
Q(L = ε0) = e^{−ε0}/2, Q(L = −ε0) = 1/2, Q(ℓ < L < ε0) = (e^{−(ε0+ℓ)/2} − e^{−ε0})/2.
Each tail is written as e^{−(…)/2}·(1 − e^{−(…)/2}) with both exponents ≤ 0, so nothing
overflows for large ε0 (e^{−ε0} underflows to 0 beyond ε0 ≈ 745, which only drops the atom at −ε0).
"""

from __future__ import annotations

from functools import partial

import numpy as np
from numpy.typing import NDArray

from dpviz.mechanisms.base import Mechanism
from dpviz.params import Param
from dpviz.pld.law import ContinuousPart, LossLaw
from dpviz.validation import ParameterError, check_positive

EPSILON0_MAX = 1e6
"""Largest ε0 = Δ/b accepted: beyond it P(L = ε0) ≥ 1/2 hides any privacy, and k·ε0 must stay
far from float overflow on the PLD grid."""


def epsilon0(*, scale: float, sensitivity: float = 1.0) -> float:
    """ε0 = Δ/b, at most ``EPSILON0_MAX`` (a tiny scale is refused, naming ``scale``)."""
    sens = check_positive(sensitivity, field="sensitivity")
    b = check_positive(scale, field="scale")
    e0 = sens / b
    if not e0 <= EPSILON0_MAX:
        raise ParameterError("scale", scale, f"at least sensitivity·1e-6 = {sens / EPSILON0_MAX:.3g} "
                                             "(ε0 = Δ/b ≤ 1e6)")
    return e0


def loss_law(*, scale: float, sensitivity: float = 1.0) -> LossLaw:
    e0 = epsilon0(scale=scale, sensitivity=sensitivity)
    half_tail = 0.5 * np.exp(-e0)

    def x_(v: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.clip(np.asarray(v, dtype=float), -e0, e0)

    # e^{−ε0}(e^{(ε0 ± ℓ)/2} − 1)/2 = −e^{−(ε0 ∓ ℓ)/2} expm1(−(ε0 ± ℓ)/2)/2: no overflow
    part = ContinuousPart(
        lo=-e0, hi=e0,
        sf_p=lambda v: -0.5 * np.expm1(-(e0 - x_(v)) / 2.0),
        cdf_p=lambda v: -0.5 * np.exp(-(e0 - x_(v)) / 2.0) * np.expm1(-(e0 + x_(v)) / 2.0),
        sf_q=lambda v: -0.5 * np.exp(-(e0 + x_(v)) / 2.0) * np.expm1(-(e0 - x_(v)) / 2.0),
        cdf_q=lambda v: -0.5 * np.expm1(-(e0 + x_(v)) / 2.0),
    )
    return LossLaw(name=f"Laplace ε0={e0:g}", loss=np.array([e0, -e0]), p=np.array([0.5, half_tail]),
                   q=np.array([half_tail, 0.5]), continuous=part, symmetric=True)


class Laplace(Mechanism):
    """The Laplace mechanism Lap(b) on a query of ℓ1-sensitivity Δ; pure ε0 = Δ/b."""

    key = "laplace"
    title = "Laplace"
    required = ("scale",)
    params = (
        Param("scale", "scale b", 1.0, partial(check_positive, field="scale"), "Laplace scale b > 0"),
        Param("sensitivity", "sensitivity Δ", 1.0, partial(check_positive, field="sensitivity"),
              "query sensitivity Δ"),
    )

    @property
    def eps0(self) -> float:
        return epsilon0(scale=self.scale, sensitivity=self.sensitivity)

    def validate(self) -> None:
        self.eps0  # noqa: B018 (raises ParameterError naming scale)

    def loss_law(self) -> LossLaw:
        return loss_law(scale=self.scale, sensitivity=self.sensitivity)

    def rdp(self, order: int) -> float:
        """Mironov 2017, Table II (see ``dpviz.rdp.subsampled``)."""
        from dpviz.rdp.subsampled import laplace_rdp

        return laplace_rdp(order=order, eps0=self.eps0)

    @property
    def grid_unit(self) -> float | None:
        return self.eps0

    @property
    def max_loss(self) -> float | None:
        return self.eps0
