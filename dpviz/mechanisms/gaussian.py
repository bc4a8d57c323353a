"""Gaussian mechanism: noise N(0, σ²) on a query of ℓ2-sensitivity Δ; μ = Δ/σ.

Privacy loss under P is N(μ²/2, μ²) (Steinke, seed 001, Prop. 3 / proof of Cor. 8), so

    δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)        (Steinke Cor. 8, exact)

and k-fold composition is again Gaussian with μ√k (Steinke Cor. 10). The closed form is
evaluated in log space (``log_ndtr``) so tails down to δ = 1e-300 keep their precision.
"""

from __future__ import annotations

import math
import time
from functools import partial

import numpy as np
from numpy.typing import NDArray
from scipy.special import log_ndtr, ndtr

from dpviz.guarantee import Guarantee, Kind
from dpviz.mechanisms.base import LossDraw, Mechanism
from dpviz.numerics import bisect_float, log1mexp
from dpviz.params import Param
from dpviz.pld.law import ContinuousPart, LossLaw
from dpviz.validation import ParameterError, check_count, check_positive

SOURCE = "Steinke Cor. 8/10 (Gaussian, exact)"


MU_MAX = 1e6
"""Largest μ = Δ/σ accepted: the loss then has mean μ²/2 = 5e11 (no privacy left), and μ²·k
stays far from float overflow."""


def mu(*, sigma: float, sensitivity: float = 1.0) -> float:
    """μ = Δ/σ, at most ``MU_MAX`` (a tiny σ is refused, naming ``sigma``)."""
    sens = check_positive(sensitivity, field="sensitivity")
    s = check_positive(sigma, field="sigma")
    m = sens / s
    if not m <= MU_MAX:
        raise ParameterError("sigma", sigma, f"at least sensitivity·1e-6 = {sens / MU_MAX:.3g} "
                                             "(μ = Δ/σ ≤ 1e6)")
    return m


def loss_law(*, sigma: float, sensitivity: float = 1.0) -> LossLaw:
    """Loss law: N(μ²/2, μ²) under P and N(−μ²/2, μ²) under Q."""
    m = mu(sigma=sigma, sensitivity=sensitivity)
    a = m * m / 2.0

    def z(x: NDArray[np.float64], shift: float) -> NDArray[np.float64]:
        with np.errstate(over="ignore"):  # ±inf for tiny μ: ndtr(±inf) is the exact limit 1 or 0
            return (np.asarray(x, dtype=float) - shift) / m

    part = ContinuousPart(lo=-math.inf, hi=math.inf,
                          sf_p=lambda x: ndtr(-z(x, a)), cdf_p=lambda x: ndtr(z(x, a)),
                          sf_q=lambda x: ndtr(-z(x, -a)), cdf_q=lambda x: ndtr(z(x, -a)))
    return LossLaw(name=f"Gaussian μ={m:g}", loss=np.zeros(0), p=np.zeros(0), q=np.zeros(0),
                   continuous=part, symmetric=True)


def log_delta_mu(epsilon: float, m: float) -> float:
    """ln δ(ε) for a Gaussian of parameter μ (Steinke Cor. 8), stable in the tails."""
    if m <= 0:
        return -math.inf
    la = float(log_ndtr(-epsilon / m + m / 2.0))
    lb = float(log_ndtr(-epsilon / m - m / 2.0))
    return la + float(log1mexp(min(epsilon + lb - la, 0.0)))


def delta_for_epsilon(*, epsilon: float, sigma: float, sensitivity: float = 1.0, k: int = 1) -> float:
    """Exact δ(ε) of k compositions (μ√k, Cor. 10)."""
    k = check_count(k, field="k")
    return math.exp(log_delta_mu(epsilon, mu(sigma=sigma, sensitivity=sensitivity) * math.sqrt(k)))


def epsilon_bracket(*, delta: float, sigma: float, sensitivity: float = 1.0, k: int = 1,
                    rtol: float = 1e-12) -> tuple[float, float]:
    """A certified bracket [lo, hi] around the exact ε(δ): δ(lo) > δ ≥ δ(hi) (or lo = hi = 0).

    δ(ε) is strictly decreasing, so bisection on the exact closed form gives a bracket
    whose width is only the stopping tolerance. δ = 0 (e.g. δ/(2k) underflowed) has ε = ∞:
    the Gaussian is not ε-DP for any finite ε.
    """
    m = mu(sigma=sigma, sensitivity=sensitivity) * math.sqrt(check_count(k, field="k"))
    if not delta > 0:
        return math.inf, math.inf
    log_t = math.log(delta)
    if log_delta_mu(0.0, m) <= log_t:
        return 0.0, 0.0
    lo, hi = 0.0, max(1.0, m * m)
    while log_delta_mu(hi, m) > log_t:
        lo, hi = hi, 2.0 * hi
    return bisect_float(lambda e: log_delta_mu(e, m) > log_t, lo, hi, rtol=rtol, scale_floor=1e-300)


class Gaussian(Mechanism):
    """The Gaussian mechanism N(0, σ²) on a query of ℓ2-sensitivity Δ (module docstring)."""

    key = "gaussian"
    title = "Gaussian"
    required = ("sigma",)
    noise = "sigma"
    attackable = True
    params = (
        Param("sigma", "noise σ", 1.0, partial(check_positive, field="sigma"),
              "noise standard deviation σ > 0", span=(1e-2, 1e3)),
        Param("sensitivity", "sensitivity Δ", 1.0, partial(check_positive, field="sensitivity"),
              "query sensitivity Δ", span=(1e-3, 1e3)),
    )

    @property
    def mu(self) -> float:
        return mu(sigma=self.sigma, sensitivity=self.sensitivity)

    def validate(self) -> None:
        self.mu  # noqa: B018 (raises ParameterError naming sigma)

    def loss_law(self) -> LossLaw:
        return loss_law(sigma=self.sigma, sensitivity=self.sensitivity)

    def noise_spread(self) -> tuple[str, float] | None:
        return "s.d.", self.sigma

    def loss_draw(self) -> LossDraw:
        """N(μ, 1) against N(0, 1) (μ = Δ/σ): L(x) = μx − μ²/2 (Steinke Prop. 3)."""
        m = self.mu

        def draw(rng: np.random.Generator, n: int, under_p: bool) -> NDArray[np.float64]:
            x = rng.standard_normal(n) + (m if under_p else 0.0)
            return m * x - m * m / 2.0

        return draw

    def loss_sum(self, k: int) -> tuple[LossDraw, float] | None:
        """The k-step sum itself, N(±kμ²/2, kμ²) (Steinke Cor. 10): one draw per trial."""
        m = self.mu * math.sqrt(k)

        def draw(rng: np.random.Generator, n: int, under_p: bool) -> NDArray[np.float64]:
            return (m * m / 2.0 if under_p else -m * m / 2.0) + m * rng.standard_normal(n)

        return draw, 0.0

    def replace_one_law(self, rate: float) -> LossLaw | None:
        from dpviz.mechanisms.subsampling import gaussian_replace_one

        return gaussian_replace_one(mu=self.mu, rate=rate)

    def rdp(self, order: int) -> float:
        """ρ(λ) = λμ²/2 (Steinke Lemma 33.4)."""
        from dpviz.rdp.subsampled import gaussian_rdp

        return gaussian_rdp(order=order, mu=self.mu)

    def rdp_curve(self, orders: tuple[int, ...]) -> np.ndarray:
        """``rdp`` at every order in one array pass: μ checked once (it was, per order, most of a
        subsampled Gaussian's Rényi curve: 2,046 orders), the same floats ((λ·μ)·μ)/2."""
        m = self.mu
        return np.asarray(orders, dtype=float) * m * m / 2.0

    def step_guarantee(self, delta: float) -> Guarantee:
        """(ε(δ), δ) from the exact curve (Steinke Cor. 8), ε rounded up."""
        _, eps = epsilon_bracket(delta=delta, sigma=self.sigma, sensitivity=self.sensitivity)
        return Guarantee(epsilon=eps, delta=delta, kind=Kind.UPPER, source="per-step guarantee")

    def closed_form(self, k: int, *, delta: float | None = None,
                    epsilon: float | None = None) -> Guarantee | None:
        """Steinke Cor. 8 with μ√k (Cor. 10): ε at δ as a bisection bracket, or δ at ε."""
        t0 = time.perf_counter()
        if epsilon is not None:
            d = delta_for_epsilon(epsilon=epsilon, sigma=self.sigma, sensitivity=self.sensitivity, k=k)
            return Guarantee(epsilon=epsilon, delta=d, kind=Kind.EXACT, source=SOURCE, solved="delta",
                             seconds=time.perf_counter() - t0)
        assert delta is not None
        if delta == 0:
            return Guarantee.impossible(source=SOURCE, delta=0.0, reason="the Gaussian mechanism is not "
                                        "ε-DP for any finite ε: δ must be > 0")
        lo, hi = epsilon_bracket(delta=delta, sigma=self.sigma, sensitivity=self.sensitivity, k=k)
        return Guarantee(epsilon=hi, delta=delta, kind=Kind.UPPER if lo < hi else Kind.EXACT, source=SOURCE,
                         lower=lo, upper=hi, seconds=time.perf_counter() - t0)
