"""Privacy buckets (Meiser & Mohammadi, seed 003, pp. 16-20).

A bucket histogram for a pair (A, B) with factor f and 2n + 1 buckets: bucket i ∈ {−n..n}
holds the A-mass of events with f^{i−1} < A(x)/B(x) ≤ f^i (bucket −n everything with ratio
≤ f^{−n}), bucket ∞ the rest (ratio > f^n or B(x) = 0) — Definition 4.

Composition trees (Definition 6): a product node adds indices (sums ≤ −n go to −n, sums > n
go to ∞), a squaring node maps ι ↦ ⌈ι/2⌉ and f ↦ f² (B_s(i) = B(2i) + B(2i − 1)). Lemma 6:
every event with index i ≠ ∞ has A(x) ≤ f^i B(x); Lemma 7: bucket values are sums of A(x).

Bounds for δ(ε) = Σ_x max(0, A(x) − e^ε B(x)):
- Thm 1 (sound): B(∞) + Σ_{f^i > e^ε} B(i)(1 − e^ε/f^i).
- Real error-correction terms ℓ(i) (§4.1; ℓ(−n) = 0 at every node): we store
  ``q_real(i) = B(i)/f^i + ℓ(i)``; products compose as in the paper,
  ℓ_{T1×T2}(i) = Σ_{j+k=i} [B1(j)/f^j ℓ2(k) + B2(k)/f^k ℓ1(j) + ℓ1(j)ℓ2(k)], which is
  q_real = q_real1 * q_real2 − B/f^i. We set q_real(−n) = 0 (ℓ(−n) = −B(−n)/f^{−n}) instead of the
  paper's ℓ(−n) = 0: the paper's value multiplies FFT round-off in bucket −n by f^n (≈ e^{80}
  after a few squarings), while 0 only under-states B-mass, which keeps the bound sound.
  The paper drops the EC term of buckets where events may
  be misplaced below e^ε; we make "misplaced" precise with a slack s: every event not
  descended from bucket −n in bucket i has ratio > f^{i−s} (leaf s = 1, product s1 + s2,
  squaring (1 + s)/2). By induction q_real(x) = B(x) for those events and
  q_real(x) = 0 for events descended from bucket −n, so for buckets with f^{i−s} ≥ e^ε every
  event's term A(x) − e^ε q_real(x) is ≥ max(0, A(x) − e^ε B(x)) and the corrected term
  B(i) − e^ε q_real(i) is a sound upper bound on the bucket's contribution; other buckets use
  Thm 1's term.
- Virtual EC terms ℓ~ (§4.1, including bucket −n): ``q_virt`` is the exact B-mass of every
  bucket (and of ∞). The histogram pair (A-mass, B-mass) is then the image of (A, B) under
  the deterministic bucketing map, so by the data-processing inequality
  Σ_i max(0, B(i) − e^ε q_virt(i)) is a sound *lower* bound. Over-stating a B-mass only lowers
  it, so bucket −n (whose exact B-mass is not needed) stores the cap B(−n) ≤ 1, and terms
  with f^i ≤ e^ε (non-positive for every event in them) are left out.

Numerics: B-masses are stored tilted, ``qt = q·f^i`` (the paper's B(i) + f^i ℓ(i)); tilting
commutes with convolution and keeps every array on the scale of the A-masses, so FFT
round-off (absolute, ≈1e-16 of the largest entry) is never multiplied by e^ε. Each convolution
charges the a-priori L1 bound ``dpviz.pld.fft.l1_error`` (Higham Thm 24.2) to ``err`` (propagated like
``dpviz.pld.grid``); both bounds are widened by ``err``.

Extreme sizes (issue 14). Leaves tilt in log space; where a B-mass underflows, the bucket's
ratio bounds a ≤ q·f^i ≤ f·a give the under-statement a for ``q_real`` and the over-statement
f·a for ``q_virt``. The ∞ bucket's B-mass is untilted and can be ~e^{−2n ln f}: it is kept as a
log (over-stated: B(either ∞) ≤ B1(∞) + B2(∞)). Tilted masses grow like f, so no node may reach
ln f > ``MAX_LOG_F`` (products would overflow), and once ``err`` ≥ 1 both bounds are trivial:
the tree stops there and the route reports that it has no bounds, instead of a silent 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray
from scipy import fft as sfft
from scipy.special import logsumexp

from dpviz.pld import fft
from dpviz.pld.law import LossLaw
from dpviz.validation import ParameterError, check_count, check_positive

MAX_BUCKETS = 4_000_001
"""Largest 2n + 1 accepted (the FFT buffers are ≈ 4× that)."""

_ULPS = 8 * np.finfo(float).eps
"""Relative slack for atoms on a bucket boundary up to floating-point rounding."""

_Q_PRECISE = 1e-290
"""B-masses below this (near the subnormal range) are treated as lost to underflow."""

MAX_LOG_F = 300.0
"""Largest bucket factor ln f any node may reach: tilted masses are ≤ f·(A-mass), and their
FFT products must stay far from float overflow (f² ≪ 1e308)."""


@dataclass(frozen=True, eq=False)
class Buckets:
    """A bucket histogram: ``a`` (A-mass, index −n..n), ``a_inf``, EC data and factor ln f."""

    log_f: float
    n: int
    a: NDArray[np.float64]
    a_inf: float
    q_real: NDArray[np.float64]
    q_virt: NDArray[np.float64]
    log_q_virt_inf: float
    """ln of an over-statement of the ∞ bucket's B-mass (log: e^{−n ln f}-sized masses must not
    underflow to 0, which would let the lower bound count them as infinite loss)."""
    slack: float
    floor_empty: bool = False
    """True when bucket −n holds no A- and no B-mass (known only at leaves)."""
    err: float = 0.0
    """A-priori L1 bound on FFT round-off in each stored array (as ``GridPLD.err``)."""

    @property
    def index(self) -> NDArray[np.int64]:
        return np.arange(-self.n, self.n + 1)

    # ------------------------------------------------------------- building
    @classmethod
    def from_law(cls, law: LossLaw, *, log_f: float, n: int) -> Buckets:
        """Leaf l(A, B, f, n) of a composition tree (Definition 4), from an exact loss law."""
        log_f = check_positive(log_f, field="log_f", maximum=MAX_LOG_F)
        n = check_count(n, field="n", maximum=(MAX_BUCKETS - 1) // 2)
        idx = np.arange(-n, n + 1)
        a = np.zeros(2 * n + 1)
        q = np.zeros(2 * n + 1)
        a_inf, q_inf = law.p_inf, 0.0
        q[0] += law.q_neg_inf  # B-mass with A = 0: ratio 0 ≤ f^{−n}
        if law.loss.size:
            t = law.loss / log_f
            # smallest i with L ≤ i ln f; a few ulps of slack absorb the rounding of L/ln f, but
            # an atom truly above a grid point is never moved down onto it
            i = np.ceil(t - _ULPS * np.maximum(1.0, np.abs(t))).astype(np.int64)
            low, high = i <= -n, i > n
            mid = ~(low | high)
            np.add.at(a, i[mid] + n, law.p[mid])
            np.add.at(q, i[mid] + n, law.q[mid])
            a[0] += law.p[low].sum()
            q[0] += law.q[low].sum()
            a_inf += float(law.p[high].sum())
            q_inf += float(law.q[high].sum())
        c = law.continuous
        if c is not None:
            edges = idx * log_f
            a[1:] += c.mass(edges[:-1], edges[1:], side="p")
            q[1:] += c.mass(edges[:-1], edges[1:], side="q")
            lo = np.array([edges[0]])
            hi = np.array([edges[-1]])
            a[0] += float(c.cdf_p(lo)[0])
            q[0] += float(c.cdf_q(lo)[0])
            a_inf += float(c.sf_p(hi)[0])
            q_inf += float(c.sf_q(hi)[0])
        # events above the top bucket have finite loss > n ln f (B < A f^{−n}) or B = 0
        above = a_inf - law.p_inf
        if q_inf >= _Q_PRECISE or above <= 0:
            log_q_inf = math.log(q_inf) if q_inf > 0 else -math.inf
        else:  # underflowed: over-state by the ratio bound
            log_q_inf = math.log(above) - n * log_f
        floor_empty = bool(a[0] == 0 and q[0] == 0)
        # tilted B-masses q·f^i in log space: f^i overflows for i ln f > 709 where q underflows.
        # A bucket's events have f^{i−1} < A/B ≤ f^i, so a ≤ q·f^i ≤ f·a; where q carries no
        # precision (underflow) use f·a for the over-stated virtual masses and a for the
        # under-stated real ones (module docstring: both directions stay sound).
        precise = q >= _Q_PRECISE
        log_q = np.log(q, out=np.full_like(q, -np.inf), where=precise)
        tilt = idx * log_f
        small = tilt <= 700.0
        qt = np.where(small, q * np.exp(np.minimum(tilt, 700.0)), np.exp(np.minimum(log_q + tilt, 700.0)))
        lost = ~precise & (a > 0)
        q_real = np.where(lost, a * (1.0 - 1e-9), qt)
        qt = np.where(lost, a * math.exp(log_f), qt)
        q_real[0] = 0.0  # bucket −n forgets its B-mass (module docstring)
        qt[0] = math.exp(-n * log_f)  # cap B(−n) ≤ 1 (module docstring)
        return cls(log_f=log_f, n=n, a=a, a_inf=a_inf, q_real=q_real, q_virt=qt,
                   log_q_virt_inf=log_q_inf, slack=1.0, floor_empty=floor_empty)

    # ------------------------------------------------------------- tree nodes
    def compose(self, other: Buckets) -> Buckets:
        """Product node T1 × T2 (Definition 6); needs the same f and n."""
        if other.n != self.n or not math.isclose(other.log_f, self.log_f, rel_tol=1e-12):
            raise ValueError("product nodes need equal bucket factor and bucket count")
        n = self.n
        same = other is self
        a, a_over = _clip(_conv(self.a, other.a, same), n)
        qr, _ = _clip(_conv(self.q_real, other.q_real, same), n)
        full_v = _conv(self.q_virt, other.q_virt, same)
        qv, _ = _clip(full_v, n)
        over = full_v[3 * n + 1:]
        pos = np.flatnonzero(over > 0)
        log_over = (float(logsumexp(np.log(over[pos]) - (pos + n + 1) * self.log_f))  # untilt
                    if pos.size else -math.inf)
        a_tot1, a_tot2 = float(self.a.sum()), float(other.a.sum())
        a_inf = self.a_inf * (a_tot2 + other.a_inf) + a_tot1 * other.a_inf + a_over
        # B(either ∞) ≤ B1(∞) + B2(∞) (over-stated, as the lower bound needs), plus the overflow
        log_q_inf = min(0.0, float(logsumexp([self.log_q_virt_inf, other.log_q_virt_inf, log_over])))
        qr[0] = 0.0  # module docstring
        qv[0] = math.exp(-n * self.log_f)  # cap B(−n) ≤ 1
        out = Buckets(log_f=self.log_f, n=n, a=a, a_inf=a_inf, q_real=qr, q_virt=qv,
                      log_q_virt_inf=log_q_inf, slack=self.slack + other.slack,
                      err=_product_err(self, other))
        # an FFT of overflowing tilted masses returns inf/NaN without a warning, and max(0, NaN) is 0:
        # such a node has no bounds (err = ∞, ``swamped``) instead of a silent δ_lower = 0
        return out if out._finite() else out._trivial()

    def _finite(self) -> bool:
        return bool(np.isfinite(self.a).all() and np.isfinite(self.q_real).all()
                    and np.isfinite(self.q_virt).all() and math.isfinite(self.a_inf)
                    and not math.isnan(self.err))

    def squared(self) -> Buckets:
        """Squaring node sT: ι ↦ ⌈ι/2⌉, f ↦ f², B_s(i) = B(2i) + B(2i − 1)."""
        n = self.n
        new = -((-self.index) // 2)  # ⌈ι/2⌉
        # tilted masses: q·f^ι = (q·(f²)^{⌈ι/2⌉})·f^{ι − 2⌈ι/2⌉}
        untilt = np.exp((2 * new - self.index) * self.log_f)
        out = []
        for arr in (self.a, self.q_real * untilt, self.q_virt * untilt):
            b = np.zeros(2 * n + 1)
            np.add.at(b, new + n, arr)
            out.append(b)
        out[2][0] = math.exp(-n * 2.0 * self.log_f)
        return Buckets(log_f=2.0 * self.log_f, n=n, a=out[0], a_inf=self.a_inf, q_real=out[1],
                       q_virt=out[2], log_q_virt_inf=self.log_q_virt_inf, slack=(1.0 + self.slack) / 2.0,
                       err=_times_f(self.err, self.log_f))  # re-tilting scales by ≤ f

    @property
    def swamped(self) -> bool:
        """True once the round-off bound ``err`` is ≥ 1: both δ bounds are then trivial (1 and 0),
        so further nodes are not computed (their tilted masses could overflow)."""
        return not self.err < 1.0

    def _trivial(self) -> Buckets:
        """The same node with every bound trivial (err = ∞), arrays dropped."""
        z = np.zeros(2 * self.n + 1)
        return Buckets(log_f=self.log_f, n=self.n, a=z, a_inf=1.0, q_real=z, q_virt=z,
                       log_q_virt_inf=-math.inf,
                       slack=self.slack, err=math.inf)

    def self_compose(self, k: int, *, squaring: bool = False) -> Buckets:
        """k-fold tree: a chain of k − 1 products, or (``squaring``) binary powering where each
        level squares both the base and the accumulator so that products meet equal factors."""
        k = check_count(k, field="k")
        if not squaring:
            power = self._power_without_clipping(k)
            if power is not None:
                return power
            out = self
            for _ in range(k - 1):
                out = out.compose(self)
                if out.swamped:
                    return out._trivial()
            return out
        acc: Buckets | None = None
        base = self
        while True:
            if k & 1:
                acc = base if acc is None else acc.compose(base)
            k >>= 1
            if not k:
                break
            if base.swamped or (acc is not None and acc.swamped) or 2.0 * base.log_f > MAX_LOG_F:
                return base._trivial() if acc is None else acc._trivial()
            half = base.squared()
            base = half.compose(half)  # one node squared: each array transformed once (``fft.convolve``)
            if acc is not None:
                acc = acc.squared()
        assert acc is not None
        return acc._trivial() if acc.swamped else acc

    def _power_without_clipping(self, k: int) -> Buckets | None:
        """The chain T × T × … × T when no partial sum of indices can leave −n + 1..n.

        Then no node clips, every product node is a plain convolution and the chain equals the
        k-th convolution power, computed with one forward and one inverse FFT per array.
        """
        if not self.floor_empty or self.a_inf > 0 or self.log_q_virt_inf > -math.inf:
            return None
        body = (self.a > 0) | (self.q_virt > 0) | (self.q_real > 0)
        body[0] = False
        nz = np.flatnonzero(body)
        if nz.size == 0:
            return None
        i_min, i_max = int(nz[0]) - self.n, int(nz[-1]) - self.n
        if k * i_max > self.n or k * i_min <= -self.n:
            return None
        for arr in (self.a, self.q_real, self.q_virt):
            total = float(arr[nz[0]:nz[-1] + 1].sum())
            if total > 0 and k * math.log(total) > 600.0:  # the k-th power could overflow
                return None
        width = i_max - i_min + 1
        length = k * (width - 1) + 1
        nfft = sfft.next_fast_len(length, real=True)
        out = []
        for arr in (self.a, self.q_real, self.q_virt):
            f = sfft.rfft(arr[nz[0]:nz[-1] + 1], nfft, workers=-1)
            full = np.maximum(sfft.irfft(f**k, nfft, workers=-1)[:length], 0.0)
            b = np.zeros(2 * self.n + 1)
            start = k * i_min + self.n
            b[start:start + length] = full
            out.append(b)
        out[2][0] = math.exp(-self.n * self.log_f)  # cap B(−n) ≤ 1
        return Buckets(log_f=self.log_f, n=self.n, a=out[0], a_inf=0.0, q_real=out[1], q_virt=out[2],
                       log_q_virt_inf=-math.inf, slack=k * self.slack,
                       err=k * (self.err + fft.l1_error(nfft, self.a, self.q_virt[1:])))

    # ------------------------------------------------------------- bounds
    @cached_property
    def _levels(self) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The indices i and their losses i·ln f (increasing), made once for the many δ(ε) a
        bisection reads (``epsilon_from_delta_curve``)."""
        i = self.index
        return i, np.asarray(i * self.log_f, dtype=np.float64)

    def _above(self, epsilon: float) -> int:
        """The first bucket with i·ln f > ε: the buckets above ε are that one and all after it."""
        return int(np.searchsorted(self._levels[1], epsilon, side="right"))

    def delta_upper(self, epsilon: float, *, error_correction: bool = True) -> float:
        """Thm 1 (and, with ``error_correction``, the real EC terms of §4.1)."""
        i, level = self._levels
        j = self._above(epsilon)
        gap = epsilon - level[j:]  # ε − i ln f < 0
        plain = self.a[j:] * -np.expm1(gap)
        if error_correction:
            safe = (i[j:] - self.slack) * self.log_f >= epsilon
            corrected = np.maximum(self.a[j:] - np.exp(gap) * self.q_real[j:], 0.0)
            plain = np.where(safe, np.minimum(plain, corrected), plain)
        return min(1.0, self.a_inf + float(plain.sum()) + self.err)

    def delta_lower(self, epsilon: float) -> float:
        """Data-processing lower bound with the virtual EC terms (exact bucket B-masses)."""
        j = max(self._above(epsilon), 1)  # bucket −n left out
        factor = np.exp(epsilon - self._levels[1][j:])  # < 1: round-off is not amplified
        body = float(np.maximum(self.a[j:] - factor * self.q_virt[j:], 0.0).sum())
        if self.log_q_virt_inf == -math.inf:
            return max(0.0, body + self.a_inf - self.err)
        log_b = epsilon + self.log_q_virt_inf  # e^ε·B(∞) in log space (e^ε overflows)
        inf_term = 0.0 if log_b > 1.0 else max(0.0, self.a_inf - math.exp(log_b))
        return max(0.0, body + inf_term - self.err)


def _times_f(err: float, log_f: float) -> float:
    """err·f without overflow (∞ when it would overflow, 0 stays 0)."""
    if err == 0.0:
        return 0.0
    return math.exp(math.log(err) + log_f) if math.log(err) + log_f < 700.0 else math.inf


def _product_err(x: Buckets, y: Buckets) -> float:
    """Round-off bound of a product node, worst over the three arrays."""
    n = x.a.size + y.a.size - 1
    worst = 0.0
    for ax, ay in ((x.a, y.a), (x.q_real, y.q_real), (x.q_virt[1:], y.q_virt[1:])):
        tx, ty = float(ax.sum()), float(ay.sum())
        e = (x.err * ty + y.err * tx + x.err * y.err
             + fft.l1_error(n, ax, ay))
        worst = max(worst, e)
    return worst


def _conv(a: NDArray[np.float64], b: NDArray[np.float64], same: bool) -> NDArray[np.float64]:
    return np.maximum(fft.convolve(a, b, same=same), 0.0)


def _clip(full: NDArray[np.float64], n: int) -> tuple[NDArray[np.float64], float]:
    """Indices −2n..2n → −n..n: sums ≤ −n into bucket −n, sums > n returned as overflow (∞)."""
    out = full[n:3 * n + 1].copy()
    out[0] += full[:n].sum()
    return out, float(full[3 * n + 1:].sum())


def epsilon_from_delta_curve(delta_fn: Callable[[float], float], *, delta: float, hi: float = 200.0,
                             tol: float = 1e-9, lower: bool = False) -> float | None:
    """ε where a non-increasing δ-curve crosses δ, by bisection.

    For an upper curve returns the bracket end with delta_fn(ε) ≤ δ (a sound ε); with
    ``lower`` the end with delta_fn(ε) > δ, so that ε_true > the returned value.
    """
    if delta_fn(0.0) <= delta:
        return 0.0
    lo = 0.0
    while delta_fn(hi) > delta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e7:  # a lower curve still above δ here: ε > lo is what is certified
            return lo if lower else None
    while hi - lo > tol * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        if delta_fn(mid) > delta:
            lo = mid
        else:
            hi = mid
    return lo if lower else hi


def check_buckets(count: object) -> int:
    """Number of finite buckets 2n + 1, odd, in [3, MAX_BUCKETS]."""
    c = check_count(count, field="buckets", minimum=3, maximum=MAX_BUCKETS)
    if c % 2 == 0:
        raise ParameterError("buckets", count, f"an odd whole number in [3, {MAX_BUCKETS:,}] (2n + 1)")
    return c
