"""Randomized response with m categories: report the true value w.p. e^{ε0}/(e^{ε0} + m − 1).

For neighbours whose true values differ, the reported value equal to P's truth has loss +ε0,
equal to Q's truth −ε0, any other value 0. For m = 2 this is the canonical (ε0, 0) pair
(KOV eq. 16 with δ0 = 0), the worst case among ε0-DP mechanisms.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from dpviz.mechanisms.base import Mechanism
from dpviz.params import Param
from dpviz.pld.law import LossLaw
from dpviz.validation import ParameterError, check_count, check_epsilon, check_positive


def loss_law(*, eps0: float, categories: int = 2) -> LossLaw:
    e0 = check_epsilon(eps0, field="eps0")
    if e0 == 0:
        raise ParameterError("eps0", eps0, "a number in (0, 100]")
    m = check_count(categories, field="categories", minimum=2, maximum=1_000_000)
    z = math.exp(e0) + m - 1.0
    hi, lo = math.exp(e0) / z, 1.0 / z
    loss = [e0, 0.0, -e0] if m > 2 else [e0, -e0]
    p = [hi, (m - 2) * lo, lo] if m > 2 else [hi, lo]
    q = [lo, (m - 2) * lo, hi] if m > 2 else [lo, hi]
    return LossLaw.from_atoms(f"Randomized response ε0={e0:g}, m={m}", np.array(loss), np.array(p),
                              np.array(q), symmetric=True)


class RandomizedResponse(Mechanism):
    """Randomized response over m categories (module docstring); pure ε0-DP."""

    key = "randomized-response"
    title = "Randomized response"
    required = ("eps0",)
    finite = True
    noise = "eps0"
    more_is_noise = False
    attackable = True
    params = (
        Param("eps0", "ε0", 0.1, partial(check_positive, field="eps0", maximum=100.0),
              "ε0 of randomized response", span=(1e-3, 20.0)),
        Param("categories", "categories m", 2,
              partial(check_count, field="categories", minimum=2, maximum=1_000_000),
              "number of categories m ≥ 2", span=(2, 10)),
    )

    def noise_spread(self) -> tuple[str, float] | None:
        """The probability that an answer is flipped, 1/(1 + e^{ε0}) (two categories)."""
        return "flip probability", 1.0 / (1.0 + math.exp(self.eps0))

    def loss_law(self) -> LossLaw:
        return loss_law(eps0=self.eps0, categories=self.categories)

    @property
    def grid_unit(self) -> float | None:
        return self.eps0

    @property
    def max_loss(self) -> float | None:
        return self.eps0

    @property
    def canonical_pair(self) -> tuple[float, float] | None:
        return (self.eps0, 0.0) if self.categories == 2 else None
