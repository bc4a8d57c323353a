"""Poisson subsampling with rate q under add/remove neighbours (Steinke, seed 001, §6).

Approximate DP (Steinke Thm 29, tight): an (ε, δ)-DP mechanism run on a Poisson sample
of rate q is (ln(1 + q(e^ε − 1)), qδ)-DP.

PLD of the subsampled mechanism. Let (P, Q) be the mechanism's outputs with and without
the person. The sampled mechanism outputs P' = (1 − q)Q + qP with the person, Q without:
- *remove* direction (P', Q): loss g(L) = ln(1 − q + q e^L), law (1−q)·Q-law + q·P-law;
- *add* direction (Q, P'): the reverse pair, loss −g(L) under Q.
Both are exact monotone transforms of the base law, so every quantity stays exact; the
mechanism's ε at δ is the larger of the two directions.
"""

from __future__ import annotations

import math

import numpy as np

from dpviz.guarantee import Guarantee, Kind
from dpviz.pld.law import ContinuousPart, LossLaw
from dpviz.validation import check_delta, check_epsilon, check_probability

SOURCE_THM29 = "Steinke Thm 29 (subsampling, tight)"


def amplify(*, epsilon: float, delta: float, rate: float) -> Guarantee:
    """(ε, δ) → (ln(1 + q(e^ε − 1)), qδ) (Steinke Thm 29)."""
    e = check_epsilon(epsilon, field="epsilon", maximum=math.inf)
    d = check_delta(delta, field="delta")
    q = check_probability(rate, field="sampling_rate")
    if e <= 700.0 or q == 1.0:
        eps = math.log1p(q * math.expm1(e)) if q < 1.0 else e
    else:  # ln(1 − q + q e^ε) in log space: e^ε overflows past ε ≈ 709
        eps = float(np.logaddexp(math.log1p(-q), math.log(q) + e))
    return Guarantee(epsilon=eps, delta=q * d, kind=Kind.UPPER, source=SOURCE_THM29)


def _g(x: np.ndarray, q: float) -> np.ndarray:
    """g(ℓ) = ln(1 − q + q e^ℓ), monotone increasing, g(−∞) = ln(1 − q)."""
    with np.errstate(over="ignore"):
        return np.logaddexp(math.log1p(-q), math.log(q) + x) if q < 1 else x


def _g_inv(y: np.ndarray, q: float) -> np.ndarray:
    """ℓ = ln((e^y − (1 − q))/q); −∞ at or below y = ln(1 − q)."""
    y = np.asarray(y, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inner = np.expm1(y) + q  # e^y − 1 + q, accurate near y = 0
        out = np.where(inner > 0, np.log(np.maximum(inner, 1e-320)) - math.log(q), -np.inf)
    return out


def subsample_remove(law: LossLaw, *, rate: float) -> LossLaw:
    """The remove-direction law (P', Q) with P' = (1 − q)Q + qP (see module docstring)."""
    q = check_probability(rate, field="sampling_rate")
    if q == 1.0:
        return law
    loss = _g(law.loss, q)
    p = (1.0 - q) * law.q + q * law.p
    qq = law.q
    if law.q_neg_inf > 0:  # outcomes with P = 0 get loss g(−∞) = ln(1 − q)
        loss = np.append(loss, math.log1p(-q))
        p = np.append(p, (1.0 - q) * law.q_neg_inf)
        qq = np.append(qq, law.q_neg_inf)
    cont = None
    c = law.continuous
    if c is not None:
        lo = float(_g(np.array([c.lo]), q)[0]) if math.isfinite(c.lo) else math.log1p(-q)
        hi = float(_g(np.array([c.hi]), q)[0]) if math.isfinite(c.hi) else math.inf

        def inv(y):
            return np.clip(_g_inv(y, q), c.lo, c.hi)

        def mix(fq, fp):
            def f(y):
                x = inv(y)
                return (1.0 - q) * fq(x) + q * fp(x)
            return f

        cont = ContinuousPart(lo=lo, hi=hi, sf_p=mix(c.sf_q, c.sf_p), cdf_p=mix(c.cdf_q, c.cdf_p),
                              sf_q=lambda y: c.sf_q(inv(y)), cdf_q=lambda y: c.cdf_q(inv(y)))
    return LossLaw(name=f"{law.name}, Poisson q={q:g} (remove)", loss=loss, p=p, q=qq,
                   p_inf=q * law.p_inf, q_neg_inf=0.0, continuous=cont)


def subsample(law: LossLaw, *, rate: float) -> tuple[LossLaw, LossLaw]:
    """(remove, add) direction laws of the Poisson-subsampled mechanism."""
    remove = subsample_remove(law, rate=rate)
    if rate == 1.0:
        return (law, law.reversed())
    add = remove.reversed()
    return remove, LossLaw(name=f"{law.name}, Poisson q={rate:g} (add)", loss=add.loss, p=add.p,
                           q=add.q, p_inf=add.p_inf, q_neg_inf=add.q_neg_inf, continuous=add.continuous)
