"""k-fold composition by one forward and one inverse transform (docs/MATH.md §17).

The composed loss law of Σ k_i steps is the convolution Π_i g_i^{*k_i} (Steinke Thm 9). Its discrete
Fourier transform is Π_i φ_i^{k_i}, φ_i the transform of g_i: each part is transformed once, raised to
its power pointwise, the parts multiplied, and the product transformed back. The transform is cyclic
of length N, so the window of N bins it returns holds the composed masses *plus* every mass outside
the window, wrapped around (aliasing). Each error term is bounded and charged (§17):

- **Tails and aliasing.** The window comes from a Chernoff bound on the composed measure: its mass
  above x is ≤ e^{Λ(t) − t·x} for every t > 0, Λ(t) = Σ_i k_i ln Σ_j g_ij e^{t·L_ij} (Markov's
  inequality on e^{tS}; below x likewise with t < 0). Λ is computed for the grid measure itself,
  with its round-off added, so the bound is not an approximation. Outside mass is moved the sound
  way (pessimistic: above → +∞ or ``top``, below → the lowest window point; optimistic: dropped)
  and its wrapped copy inside the window is charged to the round-off bound.
- **Tilt.** With θ > 0 the masses transformed are w = g·e^{θL − λ}, λ = ln Σ g e^{θL}: Σ w = 1, so
  |φ| ≤ 1, and the composed tilted measure is c·e^{θS − Σkλ}. Errors are then relative to the tilted
  measure (``GridPLD.err`` is tilted: Σ_s |error_s|·e^{θ·loss_s} ≤ err).
- **Round-off of the power.** With |φ̂_i| ≤ B (B ≈ 1), |Π φ̂_i^{k_i} − Π φ_i^{k_i}| ≤ B^{K−1} Σ k_i |φ̂_i − φ_i|,
  K = Σ k_i; the power and product themselves are computed by K − 1 complex multiplications each
  of relative error ≤ √2γ₂ (Higham Lemma 3.5) along any path, so relative (1 + 3u)^{K−1} − 1 in total.
  Forward and inverse transforms obey Higham Thm 24.2 (``dpviz.pld.fft``). So the power amplifies
  the forward transform's round-off by at most K (times B^{K−1}). Frequency by frequency the forward
  error is ≤ κ‖w‖₁ and the power's ≤ K·κ·|φ̂(f) + κ|^{K−1}: where K is large that is negligible away
  from f = 0, and the smaller ℓ2 norm of the two is charged (docs/MATH.md §17.4, per frequency).
- **Rounding of w and of untilting.** Each w_j is computed with relative error ≤ η; the exact
  composition of the rounded w is then within (1 ± η)^K of the true one entrywise; untilting
  multiplies by e^{Σkλ − θS} with relative error ≤ ζ. Both are absorbed by scaling the output
  masses by (1 ± ν) towards the sound side (more mass only raises δ, less only lowers it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import fft as sfft

from dpviz.numerics import logsumexp
from dpviz.pld import fft
from dpviz.pld.entries import DIRECT_BINS, direct_sum, kept_run, trimmed, untilt
from dpviz.pld.grid import MAX_BINS, GridPLD
from dpviz.pld.spectrum import banded_product, sum_bound
from dpviz.pld.spectrum import transform as step_transform
from dpviz.validation import ParameterError

U = fft.UNIT_ROUNDOFF

NEWTON_STEPS = 40
"""Most Newton (or bisection) steps of each Chernoff search (``_edges``, ``chernoff_theta``); they
usually stop after a few. Any t (or θ) gives a valid bound; the search only makes it tight."""

SEARCH_BINS = 1024
"""Most bins a part has in the Newton searches for t and θ (``cumulants``): bins are merged in groups
of equal count, each at its mass-weighted mean loss. Any t and θ give valid bounds (those are computed
on the whole grid, ``log_mgf_many``); the merged law only locates them, for a fraction of the work."""


@dataclass(frozen=True)
class _Part:
    """One part for Λ: its finite losses, ln-masses, count and largest |loss|; ``search_loss`` and
    ``search_log_m`` the same law merged to at most ``SEARCH_BINS`` bins (``cumulants``)."""

    loss: NDArray[np.float64]
    log_m: NDArray[np.float64]
    k: int
    span: float
    search_loss: NDArray[np.float64]
    search_log_m: NDArray[np.float64]


def merged_part(g: GridPLD, k: int) -> _Part:
    keep = g.mass > 0
    loss, mass = g.losses[keep], g.mass[keep]
    search_loss, search_mass = loss, mass
    if loss.size > SEARCH_BINS:
        starts = np.arange(0, loss.size, -(-loss.size // SEARCH_BINS))
        search_mass = np.add.reduceat(mass, starts)
        search_loss = np.add.reduceat(mass * loss, starts) / search_mass
    return _Part(loss=loss, log_m=np.log(mass), k=k, span=float(np.abs(loss).max(initial=0.0)),
                 search_loss=search_loss, search_log_m=np.log(search_mass))


def log_mgf_many(parts: Sequence[_Part], ts: NDArray[np.float64]) -> NDArray[np.float64]:
    """An upper bound of Λ(t) = Σ k·ln Σ_j g_j e^{t·L_j} at every t of ``ts``: the computed value plus its
    round-off (a logsumexp of n terms is within (n + 8)u relative in the sum, exp and log adding
    u·|t·L| each; docs/MATH.md §17.2)."""
    t = np.asarray(ts, dtype=np.float64)
    total = np.zeros(t.size)
    for p in parts:
        e = np.multiply.outer(t, p.loss)  # (a few points) × bins
        e += p.log_m
        top = e.max(axis=1)
        e -= top[:, None]
        np.exp(e, out=e)
        s = top + np.log(e.sum(axis=1))
        total += p.k * (s + 4.0 * (p.loss.size + 8) * U * (1.0 + np.abs(t) * p.span + np.abs(s)))
    return total


def cumulants(parts: Sequence[_Part], a: float) -> tuple[float, float, float]:
    """(Λ(a), Λ′(a), Λ″(a)) as computed, without round-off slack, of the merged parts
    (``SEARCH_BINS``): Σ k·(ln-MGF, mean, variance) of each part tilted by e^{aL}. Only to locate t or θ;
    the bound itself is ``log_mgf_many``."""
    lam = d1 = d2 = 0.0
    for p in parts:
        e = a * p.search_loss + p.search_log_m
        top = float(e.max())
        e -= top
        # weights below e^{−700} are dropped: subnormal products made each pass ~100× slower (where
        # there are none, the plain exponential in place: the same floats without the mask)
        plain = float(e.min()) > -700.0
        w = np.exp(e, out=e) if plain else np.exp(e, out=np.zeros_like(e), where=e > -700.0)
        total = float(w.sum())
        w /= total
        mean = float(np.einsum("i,i->", w, p.search_loss))  # einsum: no BLAS thread start-up per pass
        dev = p.search_loss - mean
        lam += p.k * (top + math.log(total))
        d1 += p.k * mean
        d2 += p.k * float(np.einsum("i,i,i->", w, dev, dev))
    return lam, d1, d2


def _edges(parts: Sequence[_Part], specs: Sequence[tuple[float, float, float]], log_tau: float,
           scale: float, memo: dict[float, float] | None = None) -> list[tuple[float, float]]:
    """For each (θ, norm, sign) of ``specs``, (x, t): mass beyond x (above for sign = +1, below for −1)
    of the measure c·e^{θS − norm} is at most e^{log_tau}, by the Chernoff bound at t:
    x = ±(Λ(θ ± t) − norm − log_tau)/t with Λ from the grids and its round-off (``log_mgf_many``).
    t minimises that over ln t ∈ [ln scale − 10, ln scale + 4] (heavy tails want t far below the
    Gaussian guess ``scale``): the minimiser solves g(t) = ±t·Λ′(θ ± t) − Λ(θ ± t) + norm + log_tau = 0,
    g increasing (dg/d ln t = t²Λ″), found by Newton steps in ln t kept inside a shrinking bracket.
    ``memo`` receives the bound of Λ at each θ ± t (``log_mgf_many``, for ``_tail_bound``)."""
    ts = []
    for theta, norm, sign in specs:
        lo, hi = math.log(scale) - 10.0, math.log(scale) + 4.0
        u = math.log(scale)
        for _ in range(NEWTON_STEPS):
            t = math.exp(u)
            lam, d1, d2 = cumulants(parts, theta + sign * t)
            g = sign * t * d1 - lam + norm + log_tau
            if not math.isfinite(g) or g > 0:
                hi = u
            else:
                lo = u
            # stationary to 1e-4 of the constant (relative to Λ the test passed at once where one
            # extreme atom dominates the tilted law: there g ≈ constant, Λ ≫ it)
            if hi - lo <= 1e-3 or (math.isfinite(g) and abs(g) <= 1e-4 * max(1.0, abs(norm + log_tau))):
                break
            nxt = u - g / (t * t * d2) if math.isfinite(g) and d2 > 0 else math.nan
            u = nxt if lo < nxt < hi else 0.5 * (lo + hi)
        ts.append(math.exp(u))
    args = np.array([theta + sign * t for (theta, _n, sign), t in zip(specs, ts, strict=True)])
    lam_up = log_mgf_many(parts, args)  # the bound itself: on the grids, with round-off
    if memo is not None:
        memo.update(zip(args.tolist(), lam_up.tolist(), strict=True))
    return [(sign * (float(v) - norm - log_tau) / t, t)
            for (_theta, norm, sign), t, v in zip(specs, ts, lam_up, strict=True)]


def tail_point(grids: Sequence[tuple[GridPLD, int]], log_tail: float) -> float:
    """A loss x with mass above x of the composition Π g_i^{*k_i} at most e^{log_tail} (the Chernoff
    bound of ``_edges``, untilted)."""
    parts = [merged_part(g, k) for g, k in grids]
    var = sum(k * g.mean_sd()[1] ** 2 for g, k in grids)
    scale = math.sqrt(2.0 * max(-log_tail, 1.0)) / max(math.sqrt(var), 1e-300)
    return _edges(parts, [(0.0, 0.0, 1.0)], log_tail, scale)[0][0]


def chernoff_theta(parts: Sequence[_Part], eps: float) -> float:
    """θ ≥ 0 minimising Λ(θ) − θε (convex): the root of Λ′(θ) = ε by Newton steps kept inside a
    shrinking bracket (bisection where a step leaves it) on [0, θ_max], θ_max·max(ε, |L|) ≤
    ``TILT_EXPONENT`` so that e^{Λ(θ)} stays in the float range; 0 when ε is at or below the mean
    Λ′(0) (no θ > 0 does better). Any θ is sound (docs/MATH.md §17.3); this one puts the tilted
    measure at ε."""
    span = max(max(abs(eps), p.span) for p in parts)
    a, b = 0.0, TILT_EXPONENT / max(span * len(parts), 1e-12)
    _lam, d1, d2 = cumulants(parts, 0.0)
    if d1 >= eps:
        return 0.0
    theta = min((eps - d1) / d2, b) if d2 > 0 else 0.5 * b
    for _ in range(NEWTON_STEPS):
        _lam, d1, d2 = cumulants(parts, theta)
        d = d1 - eps
        if d > 0:
            b = theta
        else:
            a = theta
        if abs(d) <= 1e-3 * math.sqrt(max(d2, 0.0)) or b - a <= 1e-9 * b:
            break
        nxt = theta - d / d2 if d2 > 0 else math.nan
        theta = nxt if a < nxt < b else 0.5 * (a + b)
    return theta


TILT_EXPONENT = 600.0
"""Largest θ·ε (and θ·|single-step loss|) of a tilt: e^{Λ(θ)} ≈ e^{θε}·(a tail) stays below e^{709}."""


def _tail_bound(parts: Sequence[_Part], theta: float, norm: float, x: float, t: float,
                sign: float, memo: dict[float, float] | None = None) -> float:
    """Mass of c·e^{θS − norm} beyond x (≥ x for sign +1, ≤ x for −1): the least of its total
    e^{Λ(θ) − norm} and the Chernoff bound e^{Λ(θ ± t) − norm ∓ t·x}. ``memo``: bounds of Λ already
    computed, by argument (``log_mgf_many`` gives each argument's value whatever the others:
    tested), completed with the missing ones."""
    args = [theta, theta + sign * t]
    if memo is None:
        lam = log_mgf_many(parts, np.array(args)).tolist()
    else:
        missing = [a for a in args if a not in memo]
        if missing:
            memo.update(zip(missing, log_mgf_many(parts, np.array(missing)).tolist(), strict=True))
        lam = [memo[a] for a in args]
    best = min(float(lam[0]) - norm, float(lam[1]) - norm - sign * t * x)
    return math.exp(best) if best < 700 else math.inf


def compose_power(parts: Sequence[tuple[GridPLD, int]], *, tail: float,
                  tilt_at: float | None = None, theta: float | None = None,
                  entrywise: bool = False, split: bool = True) -> GridPLD:
    """The composition Π_i g_i^{*k_i} of grids of one kind and width, by one forward transform per
    part, a pointwise power and product, and one inverse transform (module docstring).

    ``tail`` is the mass all steps together may move (window edges and the final truncation); the
    result is a bound of the same kind as the inputs, with ``err`` its tilted round-off bound. With
    ``tilt_at`` = ε the masses are tilted by the Chernoff θ of the composed law at ε (``chernoff_theta``),
    so that the tilted measure sits near ε and the round-off is relative to the δ made there; ``theta``
    gives θ itself (a composition in stages tilts every stage alike, ``dpviz.pld.staged``).

    Upper grids may carry a round-off bound ``err`` tilted at that θ (a composed grid composed again):
    each adds k·err·e^{−λ}·(1 + max err·e^{−λ})^{K−1} to the tilted, normalised error (docs/MATH.md
    §17.10); an infinite one makes the result's infinite (it says nothing, ``GridPLD.informative``).
    ``entrywise`` (optimistic grids only): every mass is lowered by the bound on its own error instead,
    so that the result, with ``err`` = 0, is entry by entry below the exact composition (§17.10).
    ``split`` = False: every part by the plain transform (``spectrum.transform``; its per-frequency
    bound is up to four times the split one's, which a grid that only has to read below another's
    can afford: ``composed.compose``'s spared directions)."""
    grids = [(g, k) for g, k in parts]
    g0 = grids[0][0]
    pess, h = g0.pessimistic, g0.h
    for g, k in grids:
        if g.pessimistic != pess or not math.isclose(g.h, h, rel_tol=1e-12):
            raise ValueError("compose_power needs bounds of the same kind on the same grid")
        if g.err != 0.0 and (theta is None or g.tilt != theta or not pess):
            raise ValueError("compose_power needs inputs without round-off, or upper grids with one "
                             "tilted at the θ given")
        if k < 1:
            raise ValueError("every count must be ≥ 1")
    grids = [(trimmed(g), k) for g, k in grids]
    kk = sum(k for _, k in grids)
    offset = sum(k * g.offset for g, k in grids)
    top = sum(k * g.top for g, k in grids) if pess else math.inf
    totals = [float(g.mass.sum()) for g, _ in grids]

    # +∞ mass: (T + p)^K − T^K per part product, computed without cancellation
    pairs = list(zip(grids, totals, strict=True))
    log_all = sum(k * math.log(t + g.p_inf) for (g, k), t in pairs if t + g.p_inf > 0)
    ratio = sum(k * math.log1p(g.p_inf / t) for (g, k), t in pairs if t > 0)
    p_inf = math.exp(log_all) * -math.expm1(-ratio) if any(g.p_inf > 0 for g, _ in grids) else 0.0
    p_inf *= 1.0 + (1e-12 if pess else -1e-12)
    if any(t == 0.0 for t in totals):  # some part has no finite mass: everything is at +∞
        return GridPLD(h=h, lo=0, mass=np.zeros(1), p_inf=p_inf, pessimistic=pess, top=top, offset=offset)

    # exact support in composed bins, and the window from the Chernoff bounds
    s_min = sum(k * g.lo for g, k in grids)
    s_max = sum(k * (g.lo + g.mass.size - 1) for g, k in grids)
    carried = any(g.err != 0.0 for g, _ in grids)
    if s_max - s_min < DIRECT_BINS and not carried:
        mass = direct_sum(grids, pess)
        return GridPLD(h=h, lo=s_min, mass=mass, p_inf=p_inf, pessimistic=pess, top=top,
                       offset=offset).truncated(tail=tail)
    coarse = [merged_part(g, k) for g, k in grids]
    if theta is None:
        theta = 0.0 if tilt_at is None else chernoff_theta(coarse, tilt_at)
    # normalisers λ_i, ln Σ_j g_j e^{θL_j} with ln g_j in the exponent: SciPy's ``b=`` weights
    # overflow (to λ = ∞) when the largest θL_j has a subnormal weight and the rest do not
    lam = [logsumexp(theta * p.loss + p.log_m) for p in coarse]
    norm = sum(k * v for (_g, k), v in zip(grids, lam, strict=True))
    var = sum(k * g.mean_sd()[1] ** 2 for g, k in grids)
    share = tail / 8.0
    log_tau = math.log(max(share, 1e-300))
    scale = math.sqrt(2.0 * -log_tau) / max(math.sqrt(var), h)  # Gaussian-approximation Chernoff t
    # the window: untilted mass (moved the sound way) and tilted-normalised mass (its aliased copy)
    # beyond each edge at most ``share``
    specs = [(0.0, 0.0, 1.0), (0.0, 0.0, -1.0)]
    if theta > 0:  # untilted, the normalised measure is c/e^{norm}: the same edges will do
        specs += [(theta, norm, 1.0), (theta, norm, -1.0)]
    memo: dict[float, float] = {}  # bounds of Λ by argument, shared by the edges and tail bounds
    found = _edges(coarse, specs, log_tau, scale, memo)
    edges = {(False, 1.0): found[0], (False, -1.0): found[1]}
    edges[True, 1.0], edges[True, -1.0] = (found[2], found[3]) if theta > 0 else (found[0], found[1])
    x_hi = max(edges[False, 1.0][0], edges[True, 1.0][0])
    # below the window, untilted mass is moved to its lowest point (pessimistic) or dropped: sound at
    # every ε, and no change of δ(ε) above that point. With a tilt, δ is read near the tilt point, so
    # the window starts where the tilted measure does (its aliased copy is charged as before): the
    # bulk of the untilted law, far below ε when δ is small, is not transformed (§17.2)
    x_lo = edges[True, -1.0][0] if theta > 0 else edges[False, -1.0][0]
    s_lo = max(s_min, math.floor((x_lo - offset) / h) - 1) if math.isfinite(x_lo) else s_min
    s_hi = min(s_max, math.ceil((x_hi - offset) / h) + 1) if math.isfinite(x_hi) else s_max
    s_hi = max(s_hi, s_lo)
    width = s_hi - s_lo + 1
    if width > MAX_BINS:
        raise ParameterError("h", h, f"coarse enough that the composed grid stays below {MAX_BINS:,} "
                             f"bins (the composition's window needs {width:,}; increase h or reduce k)")
    n_fft = sfft.next_fast_len(max(width, max(g.mass.size for g, _ in grids)), real=True)
    s_top = s_lo + n_fft - 1
    x_below, x_above = (s_lo - 1) * h + offset, (s_top + 1) * h + offset

    def beyond(tilted: bool, sign: float) -> float:
        if (s_lo <= s_min) if sign < 0 else (s_top >= s_max):
            return 0.0  # the window holds the whole support on that side
        return _tail_bound(coarse, theta if tilted else 0.0, norm if tilted else 0.0,
                           x_below if sign < 0 else x_above, edges[tilted, sign][1], sign, memo)

    below, above = beyond(False, -1.0), beyond(False, 1.0)
    if theta > 0 or -norm > 700.0:  # normalised by e^{norm} in the exponent: tilted, or a total
        # finite mass below e^{−700} (k = 10^7 steps of δ0 = 0.999 have 10^{−3·10^7}), where e^{−norm}
        # overflowed and the untilted tails underflowed to 0
        alias = beyond(True, -1.0) + beyond(True, 1.0)
    else:
        alias = (below + above) * math.exp(-norm)

    # one forward transform per part, the power and product, one inverse transform
    kappa = fft.FFT_C * U * math.log2(max(n_fft, 2))
    phis: list[tuple[NDArray[np.complex128], int]] = []
    fwd, bound_b, eta = 0.0, 1.0, 0.0
    inherited, inherited_b = 0.0, 0.0  # Σ k_i·err_i·e^{−λ_i} and max_i ‖ŵ_i‖₁ + err_i·e^{−λ_i}
    table: dict[int, NDArray[np.complex128]] = {}  # twiddles, shared by the parts
    log_m = np.zeros(n_fft // 2 + 1)  # Σ_i k_i·ln m_i(f)
    weights = np.zeros(n_fft // 2 + 1)  # Σ_i k_i·e∞_i/m_i(f)
    for (g, k), v in zip(grids, lam, strict=True):
        x = g.losses
        expo = theta * x - v
        w = g.mass * np.exp(expo)
        eta = max(eta, 2.0 * U * (float(np.abs(theta * x).max()) + abs(v) + 3.0))
        w1 = sum_bound(w)  # ≥ ‖w‖₁ (w ≥ 0)
        if g.err:  # the input's own error, in the tilted, normalised measure (§17.10)
            e_in = g.err * math.exp(-v) * (1.0 + 1e-12)
            inherited += k * e_in
            inherited_b = max(inherited_b, w1 + e_in)
        # |φ̂(f) − φ(f)| ≤ e∞ at every f and ‖φ̂ − φ‖₂ ≤ e_i (Higham Thm 24.2; a few heavy bins
        # summed directly, ``spectrum.transform``), so both are ≤ m(f) = |φ̂(f)| + e∞ (§17.4)
        phi, e_inf, e_i = step_transform(w, n_fft, kappa, table, split=split)
        fwd += k * e_i
        bound_b = max(bound_b, w1 + min(e_i, e_inf))
        mag = np.abs(phi)
        mag += e_inf
        lm = np.log(mag, out=mag)
        log_m += k * lm
        np.negative(lm, out=lm)
        weights += k * e_inf * np.exp(lm, out=lm)
        phis.append((phi, k))
        del mag, lm, phi, w, x, expo  # the next part's (or the product's) arrays reuse their memory
    fwd *= math.exp((kk - 1) * math.log(bound_b)) * (1.0 + 1e-12)
    # the same error frequency by frequency: |Π φ̂_i^{k_i} − Π φ_i^{k_i}| ≤ Σ_i k_i e∞_i·Π_j m_j^{k_j}/m_i
    # (telescoping); its ℓ2 norm over the full spectrum (≤ √2 times the half rfft returns) is far
    # below the uniform bound wherever |φ|^K is small away from f = 0 (many steps)
    # e^{ln Π m} underflows to exactly 0 below −746 (most of a many-step spectrum): exponentiated only
    # elsewhere (NaN included), the same array as the whole exp
    weights *= np.exp(log_m, out=np.zeros(log_m.size), where=~(log_m < UNDERFLOW_LOG))
    per_frequency = math.sqrt(2.0) * fft.norm(weights) * (1.0 + 1e-9)
    del weights
    # the power and product only where Π m_i^{k_i} is not negligible; the exact product of the φ̂_i
    # where it is set to 0 instead is charged (§17.4, band)
    spectrum, cut = banded_product(phis, log_m)
    del phis, log_m
    fwd = min(fwd, per_frequency) + cut
    rho = math.expm1((kk - 1) * math.log1p(3.0 * U) + 1e-15)
    psi_norm = math.sqrt(2.0) * fft.norm_c(spectrum)  # ℓ2 of the full (Hermitian) spectrum
    rounding = rho / max(1.0 - rho, 1e-300) * psi_norm
    y = sfft.irfft(spectrum, n_fft, workers=-1)
    del spectrum
    entry = (fwd + rounding + (kappa + 2.0 * U) * psi_norm) / math.sqrt(n_fft)  # ℓ2 ⇒ every entry
    out = np.roll(y, -((s_lo - s_min) % n_fft))  # out[m] is the composed bin s_lo + m
    del y
    # entries below entry/√N carry no information: zeroed, their sum (≤ √N·entry, the L1 bound
    # itself) charged; a higher threshold would charge up to N·entry
    small = out <= entry / math.sqrt(n_fft)
    dropped = float(np.maximum(out[small], 0.0).sum())
    kept = np.greater(out, 0.0)
    kept &= ~small
    del small
    nz = kept_run(kept)  # the entries kept (the others are zero)
    del kept
    if inherited:  # telescoping over the K factors (§17.10)
        inherited *= math.exp((kk - 1) * math.log(max(inherited_b, 1.0))) * (1.0 + 1e-12)
    err_tilted = math.sqrt(n_fft) * entry + dropped + alias + inherited
    if entrywise and not pess:  # every entry lowered by the bound on its own error (§17.10)
        out -= (entry + alias) * (1.0 + 1e-12)
        nz = kept_run(out > 0)
        err_tilted = 0.0

    # untilt: c = ĉ·e^{Σkλ − θS}, capped at the total finite mass (a true composed mass never exceeds it)
    # ln Π T_i^{k_i}, each computed T_i within (n_i + 4)u of the true sum
    log_total = sum(k * (math.log(t) + 2.0 * (g.mass.size + 4) * U) for (g, k), t in pairs)
    mass = np.zeros(n_fft)
    zeta = untilt(out, nz, mass, s_lo=s_lo, h=h, offset=offset, theta=theta, norm=norm,
                   log_total=log_total, scratch=True)
    del out
    nu = math.expm1(kk * math.log1p(eta)) + 2.0 * zeta
    scaled = mass[nz[0]:nz[1]] if isinstance(nz, tuple) else mass  # the rest is 0 and stays 0
    scaled *= (1.0 + nu) if pess else 1.0 / (1.0 + nu)
    log_err = math.log(err_tilted) + norm + math.log1p(nu) if err_tilted > 0 else -math.inf
    err = math.exp(log_err) if log_err < 700.0 else math.inf
    if pess:  # outside mass, moved the sound way: above → +∞ (or top), below → lowest window point
        p_inf += above
        mass[0] += below
    result = GridPLD(h=h, lo=s_lo, mass=mass, p_inf=p_inf, pessimistic=pess, err=err, top=top,
                     tilt=theta, offset=offset)
    return result.truncated(tail=tail / 2.0)


UNDERFLOW_LOG = -746.0
"""e^x is exactly 0 in binary64 below this (the smallest subnormal is e^{−744.4}; e^{−745.2} rounds to 0)."""
