"""An analytic bound for Poisson-subsampled RDP, beside the tight series of Steinke Thm 34.

Steinke (seed 001, §6.6: Lemma 39, Prop. 41, Thm 38) bounds the subsampled divergence in closed
form by Taylor's theorem on f(y) = (1 + qy)^λ with y = P/Q − 1: E_Q[y] = 0 removes the linear term and
the remainder f''(ξ)y²/2 is bounded by moments of P/Q, i.e. by the base mechanism's Rényi
divergences. The seed's text lost its formulas, so dpviz states and proves its own constants along
that route (docs/MATH.md §11.5); for real order λ, rate q < 1 and the base RDP curve ρ(·):

- 1 < λ ≤ 2: ρ'(λ) ≤ ln(1 + C(λ) (1 − q)^{λ−2} q² (e^{ρ(2)} − 1)) / (λ − 1), C(λ) = λ(λ − 1)/2;
- λ ≥ 3:     ρ'(λ) ≤ ln(1 + C(λ) q² [(e^{ρ(2)} − 1) + q (e^{(λ−1)ρ(λ)} − 2 + m(λ − 2))]) / (λ − 1),
  with m(a) = e^{(a−1)ρ(a)} for a > 1 and m(1) = 1;
- 2 < λ < 3: the value at λ = 3 (Lemma 33 part 3, monotonicity).

For a ρ-zCDP base (ρ(λ) = λρ) and small λ this is ≈ λq²ρ: the "q²ρλ" of Thm 38, with a constant
near 1 instead of 10. It is never below Thm 34 at integer orders (Thm 34 is tight), which the tests
check; it shows how much the closed form gives away.
"""

from __future__ import annotations

import math
from collections.abc import Callable

SOURCE = "analytic subsampled RDP (Taylor bound in the manner of Steinke Lemma 39/Prop. 41)"

_ROUND = 16.0 * 2.0**-52


def _moment(rho: Callable[[float], float], a: float) -> float:
    """E_Q[(P/Q)^a] ≤ e^{(a−1)ρ(a)} for a > 1; exactly 1 at a = 1."""
    if a <= 1.0:
        return 1.0
    return math.exp((a - 1.0) * rho(a))


def analytic_subsampled_rdp(rho: Callable[[float], float], *, rate: float, order: float) -> float:
    """ρ'(λ) of the Poisson-subsampled mechanism (add/remove) at real order λ > 1 (module docstring),
    from the base ρ(·) at real orders; ∞ where a needed moment overflows. Rounded up."""
    q, lam = float(rate), float(order)
    if not lam > 1.0:
        raise ValueError(f"order must be > 1, got {order!r}")
    if q >= 1.0:
        return rho(lam)
    if 2.0 < lam < 3.0:
        lam = 3.0
    c = lam * (lam - 1.0) / 2.0
    try:
        second = math.expm1(rho(2.0))
        if lam <= 2.0:
            a = c * (1.0 - q) ** (lam - 2.0) * q * q * second
        else:
            high = _moment(rho, lam) - 2.0 + _moment(rho, lam - 2.0)
            a = c * q * q * (second + q * max(high, 0.0))
    except OverflowError:
        return math.inf
    if not math.isfinite(a):
        return math.inf
    return math.log1p(a) * (1.0 + _ROUND) / (lam - 1.0)
