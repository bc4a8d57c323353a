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
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from dpviz.guarantee import Guarantee, Kind
from dpviz.pld.law import ContinuousPart, LossLaw, Tail
from dpviz.validation import check_delta, check_epsilon, check_probability

if TYPE_CHECKING:
    from dpviz.mechanisms.base import Mechanism

SOURCE_THM29 = "Steinke Thm 29 (subsampling, tight)"
SOURCE_UNSAMPLED = "subsampling: no step samples the person with probability (1 − q)^k"


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
    """ℓ = ln((e^y − (1 − q))/q); −∞ at or below y = ln(1 − q). For y > 0 it is taken as
    y + ln(1 − (1 − q)e^{−y}) − ln q: e^y overflows past y ≈ 709 (that gave ℓ = ∞, so the tails of
    a law with losses beyond 709, e.g. a subsampled Gaussian σ = 0.02, lost all their mass there)."""
    y = np.asarray(y, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = np.expm1(np.minimum(y, 0.0)) + q  # e^y − 1 + q, accurate near y = 0
        small = np.where(inner > 0, np.log(np.maximum(inner, 1e-320)) - math.log(q), -np.inf)
        big = y + np.log1p(-(1.0 - q) * np.exp(-np.maximum(y, 0.0))) - math.log(q)
    return np.where(y > 0, big, small)


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

        last: list[tuple[NDArray[np.float64], NDArray[np.float64]] | None] = [None]

        def inv(y: NDArray[np.float64]) -> NDArray[np.float64]:
            # the four tails are asked at the same points (a grid's cell edges, a support search's
            # probes): the inverse of the last array asked is kept, as one (array, inverse) pair
            # written at once, so that threads sharing the law never read one's array with another's
            # inverse; never mutated by the tails
            seen = last[0]
            if seen is not None and seen[0] is y:
                return seen[1]
            x = np.clip(_g_inv(y, q), c.lo, c.hi)
            last[0] = (y, x)
            return x

        def mix(fq: Tail, fp: Tail) -> Tail:
            def f(y: NDArray[np.float64]) -> NDArray[np.float64]:
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


# ---------------------------------------------------------------------- replace-one neighbours
NEIGHBOURING = ("add-remove", "replace-one")
"""Neighbouring relations for subsampling (Steinke, seed 001, §6.2)."""

SOURCE_REPLACE = ("replace-one: the pair ((1−q)P0 + qP1, (1−q)P0 + qP2) with P1, P2 the base "
                  "shifted by ±Δ (derived loss law; Steinke §6.2)")


def _log_abs_sinh_half(y: np.ndarray) -> np.ndarray:
    """ln|sinh(y/2)| without overflow (−∞ at y = 0)."""
    a = np.abs(y)
    with np.errstate(divide="ignore"):
        return a / 2.0 + np.log(-np.expm1(-a)) - math.log(2.0)


def gaussian_replace_one(*, mu: float, rate: float) -> LossLaw:
    """Loss law of P' = (1−q)N(0,1) + qN(μ,1) against Q' = (1−q)N(0,1) + qN(−μ,1).

    Derivation (ours, for the pair of Steinke §6.2 with P0 = N(0, 1) and P1, P2 the two
    replaced records at ±μ): L(x) = ln(1 − q + q e^{μx − μ²/2}) − ln(1 − q + q e^{−μx − μ²/2})
    is odd and strictly increasing. With u = e^{μx}, e^L = w solves
    q c u² + (1 − q)(1 − w) u − q c w = 0 (c = e^{−μ²/2}), whose positive root gives
    x(ℓ) = (ℓ/2 + asinh(T))/μ, T = (1 − q)/q · e^{μ²/2} · sinh(ℓ/2).
    So P'(L > ℓ) = (1 − q)Φ̄(x) + qΦ̄(x − μ) and Q'(L > ℓ) = (1 − q)Φ̄(x) + qΦ̄(x + μ);
    Q' is P' mirrored, so the law is symmetric. At q = 1 it is the Gaussian with μ' = 2μ.
    """
    from scipy.special import ndtr

    q = check_probability(rate, field="sampling_rate")

    def x_of(v: NDArray[np.float64]) -> NDArray[np.float64]:
        y = np.asarray(v, dtype=float)
        if q == 1.0:
            return y / (2.0 * mu)
        with np.errstate(over="ignore", invalid="ignore"):
            log_t = math.log1p(-q) - math.log(q) + mu * mu / 2.0 + _log_abs_sinh_half(y)
            big = log_t > 20.0
            ash = np.where(big, log_t + math.log(2.0), np.arcsinh(np.exp(np.minimum(log_t, 20.0))))
            ash = np.where(np.isneginf(log_t), 0.0, ash)
            out = (y / 2.0 + np.sign(y) * ash) / mu
        return np.where(np.isnan(out), y, out)  # ±∞ in, ±∞ out

    def mix(shift: float, upper: bool) -> Tail:
        def f(v: NDArray[np.float64]) -> NDArray[np.float64]:
            x = x_of(v)
            with np.errstate(invalid="ignore"):
                if upper:
                    return (1.0 - q) * ndtr(-x) + q * ndtr(-(x - shift))
                return (1.0 - q) * ndtr(x) + q * ndtr(x - shift)
        return f

    part = ContinuousPart(lo=-math.inf, hi=math.inf, sf_p=mix(mu, True), cdf_p=mix(mu, False),
                          sf_q=mix(-mu, True), cdf_q=mix(-mu, False))
    return LossLaw(name=f"Gaussian μ={mu:g}, Poisson q={q:g} (replace-one)", loss=np.zeros(0), p=np.zeros(0),
                   q=np.zeros(0), continuous=part, symmetric=True)


def lattice_replace_one(log_noise: Callable[[NDArray[np.float64]], NDArray[np.float64]], *, lo: int, hi: int,
                        shift: int, rate: float, name: str, p_inf: float = 0.0,
                        lumps: tuple[tuple[float, float], tuple[float, float]] | None = None) -> LossLaw:
    """The replace-one pair of integer noise N (``log_noise``: ln N(x), normalised) on x ∈ [lo, hi]:
    P' = (1−q)N + qN(· − Δ), Q' = (1−q)N + qN(· + Δ) (Steinke §6.2 with P0 = N). ``lumps`` adds
    (ln P', ln Q') masses to the end atoms x = hi and x = lo (tails with the same loss); ``p_inf``
    bounds the P'-mass cut above hi, sent to +∞ (and the Q'-mass below lo to −∞, by symmetry)."""
    q = check_probability(rate, field="sampling_rate")
    x = np.arange(lo, hi + 1, dtype=float)
    a = math.log1p(-q) if q < 1 else -math.inf
    b = math.log(q)
    lp = np.logaddexp(a + log_noise(x), b + log_noise(x - shift))
    lq = np.logaddexp(a + log_noise(x), b + log_noise(x + shift))
    if lumps is not None:
        (up_p, up_q), (dn_p, dn_q) = lumps
        lp[-1], lq[-1] = np.logaddexp(lp[-1], up_p), np.logaddexp(lq[-1], up_q)
        lp[0], lq[0] = np.logaddexp(lp[0], dn_p), np.logaddexp(lq[0], dn_q)
    return LossLaw.from_atoms(f"{name}, Poisson q={q:g} (replace-one)", lp - lq, np.exp(lp), np.exp(lq),
                              p_inf=p_inf, q_neg_inf=p_inf, symmetric=True)


SOURCE_FIXED_SIZE = ("fixed-size sampling of m of n without replacement, replace-one: the same pair at "
                     "γ = m/n (Balle-Barthe-Gaboardi 2018; Steinke §6.2; docs/MATH.md §23)")


def fixed_size_rate(*, batch: int, population: int) -> float:
    """γ = m/n for a batch of m of n records drawn without replacement (1 ≤ m ≤ n)."""
    from dpviz.validation import ParameterError, check_count

    m = check_count(batch, field="batch_size")
    n = check_count(population, field="dataset_size")
    if m > n:
        raise ParameterError("batch_size", m, f"a whole number in [1, n], the dataset size n = {n:,}")
    return m / n


def replace_from_add_remove(epsilon: float, delta: float) -> tuple[float, float]:
    """Group privacy over the two steps remove-then-add (Steinke §6.2): an (ε, δ)-DP mechanism
    under add/remove is (2ε, (1 + e^ε)δ)-DP under replace-one."""
    return 2.0 * epsilon, (1.0 + math.exp(min(epsilon, 700.0))) * delta


class Subsampled:
    """Poisson subsampling with rate q around any registered mechanism, under add/remove (module
    docstring; Steinke Thm 29, 34) or replace-one neighbours (``gaussian_replace_one``, or the
    seed's group-privacy reduction for the guarantees)."""

    def __init__(self, base: Mechanism, *, rate: float, neighbouring: str = "add-remove",
                 batch: tuple[int, int] | None = None) -> None:
        from dpviz.validation import ParameterError

        self.batch = batch
        """(m, n) for fixed-size sampling of m of n without replacement (rate m/n, replace-one)."""
        if batch is not None:
            rate, neighbouring = fixed_size_rate(batch=batch[0], population=batch[1]), "replace-one"
        self.base = base
        self.rate = check_probability(rate, field="sampling_rate")
        if neighbouring not in NEIGHBOURING:
            raise ParameterError("neighbouring", neighbouring, "add-remove or replace-one")
        self.neighbouring = neighbouring
        if neighbouring == "replace-one" and base.replace_one_law(self.rate) is None:
            raise ParameterError("neighbouring", neighbouring,
                                 f"add-remove for the {base.key} mechanism (replace-one is implemented "
                                 "for additive noise: gaussian, laplace, geometric, discrete-gaussian)")
        self.key = base.key
        self.title = base.title
        self.params = base.params
        self.finite = base.finite
        self.values = base.values
        self.law = self.loss_law()

    def __repr__(self) -> str:
        return (f"Subsampled({self.base!r}, rate={self.rate!r}, neighbouring={self.neighbouring!r}, "
                f"batch={self.batch!r})")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Subsampled) and (
            (other.base, other.rate, other.neighbouring, other.batch)
            == (self.base, self.rate, self.neighbouring, self.batch))

    def __hash__(self) -> int:
        return hash((self.base, self.rate, self.neighbouring, self.batch))

    @property
    def replace_one(self) -> bool:
        return self.neighbouring == "replace-one"

    @property
    def sampling_rate(self) -> float:
        return self.rate

    def loss_law(self) -> LossLaw:
        if self.replace_one:
            law = self.base.replace_one_law(self.rate)
            assert law is not None
            if self.batch is not None:  # the same pair (docs/MATH.md §23), named by its sampling
                m, n = self.batch
                law = replace(law, name=law.name.replace(f"Poisson q={self.rate:g}",
                                                         f"fixed-size {m:,} of {n:,} (γ={self.rate:g})"))
            return law
        return subsample_remove(self.base.law, rate=self.rate) if self.rate < 1.0 else self.base.law

    def rdp_curve(self, orders: tuple[int, ...]) -> np.ndarray:
        """Steinke Thm 34 from the base ρ(j), j = 2..max order; replace-one by group privacy
        (Steinke Lemma 33 part 7, as §6.7 applies it): ρ_r(λ) ≤ (λ − ½)/(λ − 1)·ρ'(2λ) + ρ'(2λ − 1)."""
        from dpviz.rdp.subsampled import subsampled_rdp

        top = max(orders) * (2 if self.replace_one else 1)
        base = self.base.rdp_curve(tuple(range(2, top + 1)))

        def sub(o: int) -> float:
            return subsampled_rdp(base, rate=self.rate, order=o) if self.rate < 1.0 else float(base[o - 2])

        if not self.replace_one:
            return np.array([sub(o) for o in orders], dtype=float)
        return np.array([(o - 0.5) / (o - 1.0) * sub(2 * o) + sub(2 * o - 1) for o in orders], dtype=float)

    def step_guarantee(self, delta: float) -> Guarantee:
        """Thm 29 on the base's per-step guarantee; replace-one then doubles it by group privacy."""
        g = self.base.step_guarantee(delta)
        assert g.epsilon is not None and g.delta is not None
        a = amplify(epsilon=g.epsilon, delta=g.delta, rate=self.rate)
        if not self.replace_one:
            return a
        e, d = replace_from_add_remove(a.epsilon, a.delta)  # type: ignore[arg-type]
        scheme = " (fixed-size sampling: BBG 2018, the same bound at γ = m/n)" if self.batch else ""
        return Guarantee(epsilon=e, delta=d, kind=Kind.UPPER,
                         source=SOURCE_THM29 + " + group privacy" + scheme)

    def closed_form(self, k: int, *, delta: float | None = None,
                    epsilon: float | None = None) -> Guarantee | None:
        """ε = 0 exactly where δ ≥ 1 − (1 − q)^k, the chance that some step samples the person (a
        step that does not is the same under both neighbours: its total variation is at most q, and
        of k steps at most 1 − (1 − q)^k by the maximal coupling); elsewhere None (the PLD answers).
        A search for the smallest noise at such a q (1.25e-10, 20 steps) otherwise stopped where the
        PLD's grid gave out, after 30-110 s of grids whose every ε read 0."""
        if delta is None or self.rate >= 1.0:
            return None
        sampled = -math.expm1(k * math.log1p(-self.rate))  # 1 − (1 − q)^k
        if not sampled * (1.0 + 1e-12) <= delta:
            return None
        return Guarantee(epsilon=0.0, delta=delta, kind=Kind.EXACT, source=SOURCE_UNSAMPLED,
                         detail=f"1 − (1 − q)^k = {sampled:.3g} ≤ δ")

    grid_unit = None
    canonical_pair = None

    @property
    def max_loss(self) -> float | None:
        from dpviz.mechanisms.base import law_max_loss

        return law_max_loss(self.law)

    @property
    def label(self) -> str:
        return self.law.name

    def describe(self) -> dict[str, Any]:
        out = {**self.base.describe(), "sampling_rate": self.rate, "neighbouring": self.neighbouring}
        if self.batch is not None:
            out |= {"sampling": "fixed-size", "batch_size": self.batch[0], "dataset_size": self.batch[1]}
        return out


def wrap(base: Mechanism, *, rate: float | None, neighbouring: str = "add-remove",
         batch: tuple[int, int] | None = None) -> Mechanism | Subsampled:
    """``base`` itself without subsampling (rate None), else ``Subsampled``; replace-one without
    subsampling is rate 1 (the pair (P1, P2) itself). ``batch`` = (m, n): fixed-size sampling of m
    of n records without replacement (replace-one neighbours), instead of a Poisson rate."""
    if batch is not None:
        from dpviz.validation import ParameterError

        if rate is not None or neighbouring != "replace-one":
            raise ParameterError("batch_size", batch[0], "given without --sampling-rate, with "
                                 "--neighbouring replace-one (fixed-size sampling replaces one record)")
        return Subsampled(base, rate=1.0, batch=batch)
    everyone = rate is None or check_probability(rate, field="sampling_rate") == 1.0
    if neighbouring == "add-remove" and everyone:
        return base  # q = 1 samples everyone: the mechanism itself (its closed form and grid unit apply)
    return Subsampled(base, rate=1.0 if rate is None else rate, neighbouring=neighbouring)
