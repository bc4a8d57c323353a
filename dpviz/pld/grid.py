"""A privacy loss distribution on a uniform loss grid, and its composition by FFT.

``GridPLD`` holds non-negative P-masses at losses (lo + j)·h, a mass at L = +∞, and
``err``, an L1 bound on the floating-point error of the masses. It is a *bound*: either
``pessimistic`` (its δ(ε) is ≥ the truth for every ε ∈ ℝ) or optimistic (≤ the truth).

Why composition keeps the bound (Steinke Thm 9: composition is convolution). For
non-negative measures (P_i, Q_i) with dQ = e^{−L}dP, δ_{1⊗2}(α) = Σ_{x2} P2(x2)·δ_1(α e^{−L2(x2)})
(+ the +∞ masses), and symmetrically in 1 ↔ 2. So replacing each factor by a measure whose
δ-curve is pointwise larger (smaller) for all α = e^ε ≥ 0 makes the composed curve larger
(smaller). Total P-mass may exceed 1 (connect-the-dots does that); the argument does not need
probability measures.

Truncation after each convolution (``tail`` = mass allowed to move):
- pessimistic: top tail → +∞ (δ only grows), bottom tail → raised to the lowest kept loss
  (δ(ε) is increasing in every atom's loss: E[(1 − e^{ε−L})_+] with L larger);
- optimistic: top tail → lowered to the highest kept loss, bottom tail → dropped.

FFT error (``dpviz.pld.fft``, from Higham Thm 24.2): the ℓ2 (so entrywise) error is
≤ C·u·log2(N)·(‖a‖₂‖b‖₁ + ‖a‖₁‖b‖₂) + second order (u = 2^−53);
we charge √n times that to the L1 error ``err`` and propagate
err_{a*b} ≤ err_a‖b‖₁ + err_b‖a‖₁ + err_a err_b. δ from a pessimistic grid is reported plus
``err``, from an optimistic one minus ``err``. This is a standard a-priori bound, not a proof
about the FFT library; it is orders of magnitude below the discretisation widths we report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from dpviz.composition.atoms import LossAtoms
from dpviz.pld import fft
from dpviz.validation import ParameterError

MAX_BINS = 4_000_000
"""Largest grid we convolve (≈ 64 MB per FFT buffer); bigger requests are refused up front."""

DIRECT_PRODUCTS = 4_000_000
"""Convolutions of at most this many products are summed directly (exact up to a relative error
absorbed into the masses): no absolute FFT error, which matters for δ near 1e-15."""

DEFAULT_TAIL = 1e-15
"""Mass allowed to move at each truncation."""


@dataclass(frozen=True, eq=False)
class GridPLD:
    """P-masses at losses (lo + j)·h, plus ``p_inf`` at +∞; a pessimistic or optimistic bound."""

    h: float
    lo: int
    mass: NDArray[np.float64]
    p_inf: float
    pessimistic: bool
    err: float = 0.0
    _cache: dict = field(default_factory=dict, repr=False)
    top: float = math.inf
    """The loss at which ``p_inf`` sits: +∞, or for laws with bounded losses an upper bound of every
    loss (Σ of the parts' largest losses), so that truncation never sends mass to +∞ there."""
    tilt: float = 0.0
    offset: float = 0.0
    """The grid is (lo + j)·h + offset: a law's grid may be shifted so that its heavy atoms sit on
    grid points (offsets add under composition)."""
    """θ ≥ 0 of the round-off bound: Σ_s |error of mass s|·e^{θ·loss_s} ≤ ``err`` (module docstring)."""

    @property
    def losses(self) -> NDArray[np.float64]:
        return np.asarray((self.lo + np.arange(self.mass.size)) * self.h + self.offset, dtype=np.float64)

    @property
    def total(self) -> float:
        return float(self.mass.sum()) + self.p_inf

    @cached_property
    def atoms(self) -> LossAtoms:
        nz = self.mass > 0
        loss = self.losses[nz][::-1]
        with np.errstate(divide="ignore"):
            log_p = np.log(self.mass[nz][::-1])
        if math.isfinite(self.top):
            if self.p_inf > 0:
                loss = np.concatenate([[self.top], loss])
                log_p = np.concatenate([[math.log(self.p_inf)], log_p])
            return LossAtoms(loss=loss, log_p=log_p, p_inf=0.0)
        return LossAtoms(loss=loss, log_p=log_p, p_inf=self.p_inf)

    # ---------------------------------------------------------------- evaluation
    @property
    def informative(self) -> bool:
        """False when the round-off bound is not finite: the masses then say nothing (an upper
        grid's δ is 1, a lower grid's 0); never read a δ or ε off them."""
        return math.isfinite(self.err)

    def delta(self, epsilon: float) -> float:
        """δ(ε) of this bound, with the numerical error charged in the sound direction."""
        if epsilon >= self.top:  # no loss above ε (FFT errors sit on losses ≤ top too)
            return 0.0
        e = self.err_at(float(epsilon))
        if not math.isfinite(e):  # no information (review R1: NaN/∞ round-off)
            return 1.0 if self.pessimistic else 0.0
        d = self.atoms.delta(float(epsilon))
        return min(1.0, d + e) if self.pessimistic else max(0.0, d - e)

    def err_at(self, epsilon: float) -> float:
        """Bound on the round-off in δ(ε): only masses above ε count, and each of their errors is
        ≤ its tilted error times e^{−θε}, so Σ_{loss > ε} |error| ≤ err·e^{−θε}."""
        if self.err == 0.0:
            return 0.0
        if not math.isfinite(self.err):
            return math.inf
        x = -self.tilt * epsilon
        if x > 700.0:  # e^x overflows: no finite bound (never clipped: that would be unsound)
            return math.inf
        return self.err * math.exp(x)

    def epsilon(self, delta: float) -> float | None:
        """Smallest ε ≥ 0 with ``self.delta(ε) ≤ delta`` (an upper grid; a lower grid: an ε′ with
        ``self.delta(ε′) > delta``, so the true ε is > ε′ as δ(ε) decreases); ``None`` if none
        exists.

        With a tilted error bound (θ > 0) the error term falls with ε. An upper grid takes the
        error at the error-free solution ε₀: the ε found for δ − err(ε₀) is ≥ ε₀, where the error
        is smaller still. A lower grid searches below ε₀ for the largest ε it certifies.

        A non-finite round-off bound carries no information (review R1): an upper grid then gives
        only its finite top (bounded laws) or None, a lower grid 0."""
        if not self.informative:
            return self._eps_for(-math.inf) if self.pessimistic else 0.0
        if self.err == 0.0 or self.tilt == 0.0:
            return self._eps_for(delta - self.err if self.pessimistic else delta + self.err)
        base = self._eps_for(delta)
        if base is None:
            return None
        if self.pessimistic:
            return self._upper_search(delta, base)
        lo, hi = None, base  # lo: certified (delta(lo) > δ); hi: not
        for j in range(40, 0, -1):  # moving away from base in doubling steps
            e = base * (1.0 - 2.0**-j)
            if self.delta(e) > delta:
                lo = e
                break
            hi = e
        if lo is None:
            return 0.0
        while hi - lo > 1e-12 * max(1.0, hi):
            mid = 0.5 * (lo + hi)
            if self.delta(mid) > delta:
                lo = mid
            else:
                hi = mid
        return lo

    def _upper_search(self, delta: float, base: float) -> float | None:
        """The smallest ε (to 1e-12 relative) with δ_grid(ε) + err·e^{−θε} ≤ ``delta``, ε ≥ ``base``
        (the error-free solution). Both terms fall with ε, so the set is an interval [ε*, ∞); every
        returned point is checked to be in it. Taking the error at ``base`` alone (the first
        candidate) over-stated ε wherever the tilted error is large at ``base`` but negligible a
        little above: the add direction of q = 0.001, σ = 0.6, 10^4 steps gave 10.98 for a true
        1.77 (the mechanism's ε, the larger direction, is 5.81)."""
        hi = self._eps_for(delta - self.err_at(base))  # sound: ε ≥ base has error ≤ err_at(base)
        if hi is None:  # search upwards for a point that passes
            step = max(abs(base), self.h, 1e-12)
            e = base + step
            while self.delta(e) > delta:
                step *= 2.0
                e = base + step
                if not math.isfinite(e) or e > 1e7:
                    return None
            hi = e
        lo = base
        if self.delta(lo) <= delta:
            return lo
        while hi - lo > 1e-12 * max(1.0, abs(hi)):
            mid = 0.5 * (lo + hi)
            if self.delta(mid) <= delta:
                hi = mid
            else:
                lo = mid
        return hi

    def _eps_for(self, target: float) -> float | None:
        """ε where the grid's own δ (no round-off term) reaches ``target``."""
        if math.isnan(target):  # never read a NaN target as a δ (it passes neither test below)
            target = -math.inf if self.pessimistic else math.inf
        if target <= 0:
            return max(self.top, 0.0) if math.isfinite(self.top) else None
        if target >= 1:
            return 0.0
        eps = self.atoms.epsilon(target)
        return eps if eps is None else min(eps, max(self.top, 0.0))

    # ---------------------------------------------------------------- composition
    def compose(self, other: GridPLD, *, tail: float = DEFAULT_TAIL, tilt: float | None = None) -> GridPLD:
        """Convolution (Steinke Thm 9) followed by sound truncation.

        With ``tilt`` θ > 0 the FFT runs on the tilted masses m·e^{θ·loss} (tilting commutes with
        convolution), so its round-off is relative to the tilted peak, i.e. tiny far above the
        bulk where small δ are decided (module docstring). Inputs that carry round-off must carry
        it with the same θ."""
        if other.pessimistic != self.pessimistic or not math.isclose(other.h, self.h, rel_tol=1e-12):
            raise ValueError("compose needs two bounds of the same kind on the same grid")
        theta = self.tilt if tilt is None else float(tilt)
        for g in (self, other):
            if g.err > 0 and g.tilt != theta:
                raise ValueError("compose needs round-off bounds of the same tilt")
        n = self.mass.size + other.mass.size - 1
        if n > MAX_BINS:  # the a-priori plan is an estimate; this is the hard limit
            raise ParameterError("h", self.h, f"coarse enough that the composed grid stays below "
                                 f"{MAX_BINS:,} bins (a composition step needs {n:,}; increase h or "
                                 "reduce k)")
        a, b = self.mass, other.mass
        noise = 0.0
        if a.size * b.size <= DIRECT_PRODUCTS or min(a.size, b.size) < 64:
            # direct sums of non-negative products: each entry has relative error ≤ γ_m, m the
            # number of terms; scaling by (1 ± 2m·u) puts it on the sound side, with no absolute err
            m = min(a.size, b.size)
            out = np.convolve(a, b) * (1.0 + 2.0 * m * 2.0**-53 * (1 if self.pessimistic else -1))
            fft_err = 0.0
        elif theta == 0.0:
            out, fft_err = split_convolve(a, b, same=other is self, pessimistic=self.pessimistic)
            # the positive noise floor (total ≲ fft_err) may be truncated like a tail (its mass is
            # within the round-off already charged), else every squaring doubles the grid
            noise = fft_err
        else:
            out, fft_err = _tilted_convolve(self, other, theta, same=other is self)
        np.maximum(out, 0.0, out=out)
        ta, tb = float(a.sum()), float(b.sum())
        p_inf = self.p_inf * (tb + other.p_inf) + ta * other.p_inf
        t_self, t_other = self.tilted_total(theta), other.tilted_total(theta)
        err = _err_sum(self.err, t_other, other.err, t_self, fft_err)
        return GridPLD(h=self.h, lo=self.lo + other.lo, mass=out, p_inf=p_inf, pessimistic=self.pessimistic,
                       err=err, top=self.top + other.top, tilt=theta,
                       offset=self.offset + other.offset).truncated(tail=max(tail, noise))

    def tilted_total(self, theta: float) -> float:
        """Σ m·e^{θ·loss} over the finite masses (the total for θ = 0, with ``p_inf``)."""
        if theta == 0.0:
            return self.total
        keep = self.mass > 0  # zero masses never count (their e^{θ·loss} may overflow: 0·∞)
        with np.errstate(over="ignore"):  # an overflow is +inf (no finite bound), never clipped
            return float(np.einsum("i,i->", self.mass[keep], np.exp(theta * self.losses[keep])))

    def truncated(self, *, tail: float = DEFAULT_TAIL) -> GridPLD:
        """Move at most ``tail`` mass off each end, in the sound direction (module docstring)."""
        m = self.mass
        if m.size == 0:
            return self
        low = np.cumsum(m)
        high = np.cumsum(m[::-1])
        i0 = int(np.searchsorted(low, tail, side="right"))  # m[:i0] sums to ≤ tail
        j0 = int(np.searchsorted(high, tail, side="right"))  # top j0 entries sum to ≤ tail
        i0 = min(i0, m.size - 1)
        j1 = max(m.size - j0, i0 + 1)
        below, above = float(m[:i0].sum()), float(m[j1:].sum())
        kept = m[i0:j1].copy()
        p_inf = self.p_inf
        if self.pessimistic:
            kept[0] += below
            p_inf += above
        else:
            kept[-1] += above
        nz = np.flatnonzero(kept)
        if nz.size == 0:
            return replace(self, lo=self.lo + i0, mass=kept[:1] * 0, p_inf=p_inf, _cache={})
        kept = kept[nz[0]:nz[-1] + 1]
        return GridPLD(h=self.h, lo=self.lo + i0 + int(nz[0]), mass=kept, p_inf=p_inf,
                       pessimistic=self.pessimistic, err=self.err, top=self.top, tilt=self.tilt,
                       offset=self.offset)

    def self_compose(self, k: int, *, tail: float = DEFAULT_TAIL, total: bool = False,
                     tilt: float | None = None) -> GridPLD:
        """k-fold composition by repeated squaring: ⌊log2 k⌋ squarings + popcount(k) − 1 products.

        ``tail`` is the mass each truncation may move, or with ``total`` the mass all of them may
        move together: a truncation of the n-fold grid is repeated k/n times by the rest of the
        composition, so it gets tail·n/(k·truncations)."""
        steps = 2 * max(k.bit_length(), 1)
        result: GridPLD | None = None
        base = self
        fold, done, rest = 1, 0, k
        while True:
            if rest & 1:
                done += fold
                share = tail * done / (k * steps) if total else tail
                result = base if result is None else result.compose(base, tail=share, tilt=tilt)
            rest >>= 1
            if not rest:
                break
            fold *= 2
            share = tail * fold / (k * steps) if total else tail
            base = base.compose(base, tail=share, tilt=tilt)
        assert result is not None
        return result

    def mean_sd(self) -> tuple[float, float]:
        """Mean and standard deviation of the finite losses under the (normalised) P-mass."""
        w = self.mass / max(self.mass.sum(), 1e-300)
        x = self.losses
        mu = float(np.einsum("i,i->", w, x))
        return mu, math.sqrt(max(float(np.einsum("i,i->", w, (x - mu) ** 2)), 0.0))


def _err_sum(err_a: float, total_b: float, err_b: float, total_a: float, fft_err: float) -> float:
    """err_a·‖b‖ + err_b·‖a‖ + err_a·err_b + fft_err, and +inf whenever that is not a finite number
    (an infinite bound times a total that underflowed to 0 is NaN, not 0: review R1)."""
    terms = (err_a, total_b, err_b, total_a, fft_err)
    if not all(math.isfinite(t) for t in terms):
        return math.inf
    with np.errstate(over="ignore"):
        err = err_a * total_b + err_b * total_a + err_a * err_b + fft_err
    return err if math.isfinite(err) else math.inf


def _top_mass_loss(g: GridPLD) -> float:
    """The largest loss carrying mass (the grid's top when it has none)."""
    nz = np.flatnonzero(g.mass)
    return float(g.losses[nz[-1]] if nz.size else g.losses[-1])


def loss_span(g: GridPLD) -> float:
    """Largest |loss| carrying mass (zero-mass padding does not count: it never enters e^{θ·loss})."""
    nz = np.flatnonzero(g.mass)
    if nz.size == 0:
        return 0.0
    x = g.losses
    return float(max(abs(x[nz[0]]), abs(x[nz[-1]])))


def _tilted_convolve(x: GridPLD, y: GridPLD, theta: float, *,
                     same: bool) -> tuple[NDArray[np.float64], float]:
    """x * y through the tilted masses w = m·e^{θ(loss − c)} (c: each grid's top loss, so w ≤ m and
    nothing overflows) and the round-off bound in tilted L1 units Σ|error|·e^{θ·loss}.

    The FFT's error is ≤ ``fft.l1_error`` in L1. Entries of the tilted product not above the
    typical round-off (``fft.noise_level``) carry little information: they are set to 0 (a change
    ≤ their sum, added to the bound), so that untilting (×e^{θ(c − loss)}, large far below the
    top) cannot blow round-off up into spurious mass.
    """
    ca, cb = _top_mass_loss(x), _top_mass_loss(y)
    # exponents ≤ 0: only zero masses sit above c, so the clip changes nothing but 0·∞
    wa = x.mass * np.exp(np.minimum(theta * (x.losses - ca), 0.0))
    wb = wa if same else y.mass * np.exp(np.minimum(theta * (y.losses - cb), 0.0))
    n = wa.size + wb.size - 1
    w = fft.convolve(wa, wb, same=same)
    small = w <= fft.noise_level(n, wa, wb)  # zeroed and charged: any threshold is sound
    dropped = float(np.maximum(w[small], 0.0).sum())
    w[small] = 0.0
    losses = (x.lo + y.lo + np.arange(n)) * x.h + x.offset + y.offset
    out = w * np.exp(np.minimum(theta * (ca + cb - losses), 700.0))
    log_scale = theta * (ca + cb)
    bound = fft.l1_error(n, wa, wb) + dropped
    return out, bound * math.exp(log_scale) if log_scale < 700.0 else math.inf


SPLIT_WIDTH = 64
"""Width (bins) of the heavy window ``split_convolve`` convolves by direct sums."""


def split_convolve(a: NDArray[np.float64], b: NDArray[np.float64], *, same: bool,
                   pessimistic: bool) -> tuple[NDArray[np.float64], float]:
    """a * b with the heavy window of each factor convolved by direct sums, and an L1 bound on the
    absolute error (``fft`` module).

    The FFT's error bound C·u·log2N·(‖a‖₂‖b‖₁ + ‖a‖₁‖b‖₂) is set by the factors' peaks: a single
    step of a small-q law holds most of its mass in a few bins (‖a‖₂ ≈ 0.5), and every early
    product's error is carried by all k/2^j copies after it (k = 10^5: ×5·10^4), so the composed
    round-off reached δ ≈ 1e-6. With a = a_h + a_r (a_h: the ``SPLIT_WIDTH`` bins around a's
    largest entry; b likewise), a * b = a_h * b + a_r * b_h + a_r * b_r: the first two by direct sums
    of non-negative products (relative error ≤ γ_w, absorbed by scaling with (1 ± ε), ε = 2(w + 3)u,
    towards the sound side), the last by FFT, whose bound now has ‖a_r‖, ‖b_r‖: orders smaller.
    Scaling the FFT part and adding the three parts moves it by ≤ (ε + 4u)(‖a_r‖₁‖b_r‖₁ + its bound).
    Used when it lowers the bound at least 4-fold; else one plain FFT (docs/MATH.md §16)."""
    n = a.size + b.size - 1
    plain = fft.l1_error(n, a, b)
    w = SPLIT_WIDTH
    ia, ib = _window(a, w), _window(b, w)
    ar = a.copy()
    ar[ia:ia + w] = 0.0
    br = ar if same else b.copy()
    if not same:
        br[ib:ib + w] = 0.0
    split = fft.l1_error(n, ar, br)
    if not split < plain / 4.0:
        return fft.convolve(a, b, same=same), plain
    eps = 2.0 * (w + 3) * fft.UNIT_ROUNDOFF
    out = fft.convolve(ar, br, same=same)
    ah, bh = a[ia:ia + w], b[ib:ib + w]
    out[ia:ia + ah.size + b.size - 1] += np.convolve(ah, b)
    out[ib:ib + ar.size + bh.size - 1] += np.convolve(ar, bh)
    out *= 1.0 + (eps if pessimistic else -eps)
    r1 = fft.norm1(ar) * fft.norm1(br)
    return out, split * (1.0 + eps) + (eps + 4.0 * fft.UNIT_ROUNDOFF) * (r1 + split)


def _window(a: NDArray[np.float64], w: int) -> int:
    """Start of the w-bin window centred on a's largest entry (within the array)."""
    return max(0, min(int(np.argmax(a)) - w // 2, a.size - w))


def composed_bins(parts: list[tuple[GridPLD, int]], *, z: float = 12.0) -> int:
    """A-priori size of the composed grid: k·mean ± z·√(Σ k·var) around the sum of ranges.

    Used to refuse too-large requests *before* computing (``MAX_BINS``); z = 12 standard
    deviations covers tails far below ``DEFAULT_TAIL`` for sums of many bounded losses.
    """
    spread = 0.0
    var = 0.0
    h = parts[0][0].h
    for g, k in parts:
        _mu, sd = g.mean_sd()
        width = g.mass.size * h
        var += k * sd * sd
        spread += min(k * width, width)
    total = 2 * z * math.sqrt(var) + 2 * spread
    full = sum(k * g.mass.size for g, k in parts)
    # the first product of the widest grid with itself has 2n − 1 bins before any truncation
    first_product = max(2 * g.mass.size - 1 if k > 1 else g.mass.size for g, k in parts)
    return int(min(full, max(total / h + 1, first_product)))
