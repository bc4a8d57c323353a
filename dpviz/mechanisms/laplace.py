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

import math
from collections.abc import Callable
from functools import partial

import numpy as np
from numpy.typing import NDArray

from dpviz.mechanisms.base import LossDraw, Mechanism
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


CHUNK_DRAWS = 1 << 22
"""Most draws held in memory at once by ``loss_sum`` (32 MiB of float64)."""


def middle(eps0: float) -> float:
    """P(−ε0 < L < ε0) for one Laplace step, under P or Q: (1 − e^{−ε0})/2."""
    return -0.5 * math.expm1(-eps0)


class Laplace(Mechanism):
    """The Laplace mechanism Lap(b) on a query of ℓ1-sensitivity Δ; pure ε0 = Δ/b."""

    key = "laplace"
    title = "Laplace"
    required = ("scale",)
    noise = "scale"
    attackable = True
    params = (
        Param("scale", "scale b", 1.0, partial(check_positive, field="scale"), "Laplace scale b > 0",
              span=(1e-2, 1e3)),
        Param("sensitivity", "sensitivity Δ", 1.0, partial(check_positive, field="sensitivity"),
              "query sensitivity Δ", span=(1e-3, 1e3)),
    )

    @property
    def eps0(self) -> float:
        return epsilon0(scale=self.scale, sensitivity=self.sensitivity)

    def validate(self) -> None:
        self.eps0  # noqa: B018 (raises ParameterError naming scale)

    def loss_law(self) -> LossLaw:
        return loss_law(scale=self.scale, sensitivity=self.sensitivity)

    def noise_spread(self) -> tuple[str, float] | None:
        return "s.d.", math.sqrt(2.0) * self.scale

    def loss_draw(self) -> LossDraw:
        """Lap(0, 1) against Lap(ε0, 1) in units of b (ε0 = Δ/b): L(t) = |t − ε0| − |t|."""
        e = self.eps0

        def draw(rng: np.random.Generator, n: int, under_p: bool) -> NDArray[np.float64]:
            t = rng.laplace(0.0, 1.0, size=n) + (0.0 if under_p else e)
            return np.abs(t - e) - np.abs(t)

        return draw

    def loss_sum(self, k: int) -> tuple[LossDraw, float] | None:
        """Under P the loss is +ε0 when t ≤ 0 (mass ½), −ε0 when t ≥ ε0 (mass e^{−ε0}/2), else ε0 − 2t
        with t a standard exponential truncated to (0, ε0): the atoms are counted, only the middle
        steps drawn. Q's law is the mirror image (the pair is symmetric): Q's sum is minus a P-sum."""
        e = self.eps0
        mid = middle(e)
        pvals = np.array([0.5, 0.5 * math.exp(-e), mid])
        pvals /= pvals.sum()
        span = -math.expm1(-e)  # P(t < ε0 | t > 0)

        def draw(rng: np.random.Generator, n: int, under_p: bool) -> NDArray[np.float64]:
            out = np.empty(n)
            rows = max(1, int(CHUNK_DRAWS // max(1.0, 2.0 * k * mid)))
            for start in range(0, n, rows):
                m = min(rows, n - start)
                counts = rng.multinomial(k, pvals, size=m)
                middle_steps = counts[:, 2]
                t = -np.log1p(-span * rng.random(int(middle_steps.sum())))
                sums = np.bincount(np.repeat(np.arange(m), middle_steps), weights=e - 2.0 * t, minlength=m)
                out[start:start + m] = (counts[:, 0] - counts[:, 1]) * e + sums
            return out if under_p else -out

        return draw, mid

    def rdp(self, order: int) -> float:
        """Mironov 2017, Table II (see ``dpviz.rdp.subsampled``)."""
        from dpviz.rdp.subsampled import laplace_rdp

        return laplace_rdp(order=order, eps0=self.eps0)

    def rdp_curve(self, orders: tuple[int, ...]) -> np.ndarray:
        """``rdp`` at each order, in one array pass (``laplace_rdp_curve``)."""
        from dpviz.rdp.subsampled import laplace_rdp_curve

        return laplace_rdp_curve(orders, eps0=self.eps0)

    @property
    def grid_unit(self) -> float | None:
        return self.eps0

    def replace_one_law(self, rate: float) -> LossLaw | None:
        return replace_one_law(eps0=self.eps0, rate=rate)

    @property
    def max_loss(self) -> float | None:
        return self.eps0


def _log_expm1(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """ln(e^x − 1) for x ≥ 0 (−∞ at 0), without overflow for large x."""
    with np.errstate(divide="ignore"):
        small = np.log(np.expm1(np.minimum(x, 1.0)))
    big = x + np.log1p(-np.exp(-np.maximum(x, 1.0)))
    return np.where(x > 1.0, big, small)


def replace_one_law(*, eps0: float, rate: float) -> LossLaw:
    """Loss law of P' = (1−q)Lap(0) + qLap(Δ) against Q' = (1−q)Lap(0) + qLap(−Δ) (replace-one,
    Steinke §6.2), in units of b (t = x/b, e = ε0). Derivation (ours): with c = ln(1 − q + q e^{−e}),
    L(t) = ln(1 − q + q e^{2t−e}) − c on [0, e), odd, constant ±L* beyond ±e, where
    L* = ln(1 − q + q e^{e}) − c; so atoms at ±L* and a continuous part between, with
    t(ℓ) = (e + ln((e^{ℓ+c} − (1 − q))/q))/2 for ℓ ∈ [0, L*) and t(−ℓ) = −t(ℓ).
    P' has CDF (1 − q)G(t) + qG(t − e), Q' (1 − q)G(t) + qG(t + e), G the Lap(0, 1) CDF.
    At q = 1 it is the Laplace law with sensitivity 2Δ.
    """
    e = float(eps0)
    q = float(rate)
    a = math.log1p(-q) if q < 1 else -math.inf
    c = float(np.logaddexp(a, math.log(q) - e))
    top = float(np.logaddexp(a, math.log(q) + e)) - c

    def cdf(t: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.where(t < 0, 0.5 * np.exp(np.minimum(t, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(t, 0.0)))

    def sf(t: NDArray[np.float64]) -> NDArray[np.float64]:
        return cdf(-t)

    odds = a - math.log(q)  # ln((1 − q)/q), −∞ at q = 1

    def t_of(v: NDArray[np.float64]) -> NDArray[np.float64]:
        ell = np.clip(np.abs(np.asarray(v, dtype=float)), 0.0, top)
        # e^{ℓ+c} − (1 − q) = (1 − q)(e^ℓ − 1) + q e^{ℓ−e}: no difference of nearly equal numbers
        # (as e^{ℓ+c} − (1 − q) it was 0 or negative by round-off near ℓ = 0 once q e^{−e} fell below
        # an ulp of 1 − q, e.g. e = Δ/b = 10^5: NaN masses and a failed PLD route)
        inner = np.logaddexp(odds + _log_expm1(ell), ell - e)
        t = np.clip((e + inner) / 2.0, 0.0, e)
        return np.sign(np.asarray(v, dtype=float)) * t

    def mix(shift: float, f: Callable[[NDArray[np.float64]], NDArray[np.float64]]
            ) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
        return lambda t: (1.0 - q) * f(t) + q * f(t - shift)

    cp, cq = mix(e, cdf), mix(-e, cdf)
    sp, sq = mix(e, sf), mix(-e, sf)
    lo_t, hi_t = np.array([-e]), np.array([e])
    part = ContinuousPart(
        lo=-top, hi=top,
        sf_p=lambda v: np.maximum(sp(t_of(v)) - sp(hi_t), 0.0),
        cdf_p=lambda v: np.maximum(cp(t_of(v)) - cp(lo_t), 0.0),
        sf_q=lambda v: np.maximum(sq(t_of(v)) - sq(hi_t), 0.0),
        cdf_q=lambda v: np.maximum(cq(t_of(v)) - cq(lo_t), 0.0),
    )
    p_top, p_bottom = float(sp(hi_t)[0]), float(cp(lo_t)[0])  # P'(T ≥ e), P'(T ≤ −e)
    q_top, q_bottom = float(sq(hi_t)[0]), float(cq(lo_t)[0])
    return LossLaw(name=f"Laplace ε0={e:g}, Poisson q={q:g} (replace-one)", loss=np.array([top, -top]),
                   p=np.array([p_top, p_bottom]), q=np.array([q_top, q_bottom]), continuous=part,
                   symmetric=True)
