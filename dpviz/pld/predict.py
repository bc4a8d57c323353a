"""The grid width of a PLD composition chosen before any transform (docs/MATH.md §17.9).

For laws with a continuous part (Gaussian, Laplace, subsampled, and their mixes; atoms on grid
points, where both grids keep them exactly) the certified interval's width is set by the
discretisation of the continuous part. At the saddlepoint δ(ε) ≈ e^{Λ(θ) − θε}·c (Λ the composed
cumulant function, Λ′(θ) = ε), so a grid that changes one step's cumulant function by ΔΛ_i moves
the ε read at δ by about k_i·ΔΛ_i(θ)/θ, and the interval's width is

    w(h) ≈ Σ_i k_i·(Λ_pess,i(θ) − Λ_opt,i(θ))/θ,

Λ_pess,i and Λ_opt,i those of one step's pessimistic and optimistic grids at h (about 0.3·h²·(1 + θ)/2
a step for smooth laws: where both grids keep each cell's P- and Q-mass this is the second-moment
law (M2_pess − M2_opt)(1 + θ)/2). At a target ε instead (δ at ε) θ solves Λ′(θ) = ε and a width w in
ε is a relative width s·w in δ, s = −d ln δ/dε of the saddlepoint approximation (``predict``). It
is measured on the single steps the composition then uses, so
it also sees a grid that does not keep the Q-mass: next to an atom the post-processing's last
symbol may be left unbalanced, stored below its loss, which makes the width depend on the parity of
the cells between atoms (a subsampled Laplace at q = 0.0015: 1.27e-4 at 23 cells, 4e-6 at 24). This
module only *chooses* h and the tilt; every grid is still certified (``dpviz.pld.power``) and the
refinement checks the width.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dpviz import budget as budgets
from dpviz.budget import Budget, OverBudget
from dpviz.pld import composed, fft, staged
from dpviz.pld.cost import (
    COST_CELLS,
    Parts,
    above_bound,
    directions,
    first_stage_cost,
    planned_bins,
)
from dpviz.pld.cost import check as check_cost
from dpviz.pld.grid import GridPLD, composed_bins
from dpviz.pld.law import LossLaw
from dpviz.pld.saddlepoint import saddlepoint, saddlepoint_at
from dpviz.pld.staged import Stages
from dpviz.validation import ParameterError

SECOND_MOMENT = 0.3
"""Σ_i k_i (M2_pess − M2_opt)/(K·h²) for smooth laws at widths the refinement uses: 0.25–0.34 on
the benchmark's subsampled and plain Gaussians (0.76 once, at q = 6e-4, σ = 0.7, where the step's
law is far from smooth on the grid: the measured width then corrects the first guess). Only the
first guess of h uses it."""

AIM = 0.7
"""Fraction of the target width the predicted width aims at (the prediction is good to ±35 %)."""

MEASUREMENTS = 3
"""Most widths whose single steps are discretised to measure the width (the last one kept is also
the composition's, ``composed.discretized``); on a lattice each comes with its next finer divisor."""

UNKEPT_SHARE = 0.25
"""On a lattice, the next finer divisor is measured too where more than this share of the predicted
width is Q-mass the optimistic grid does not keep (``_widths``): there the parity of the cells
between atoms decides the width; elsewhere the second measurement would only cost time."""

SPARE_SHARE = 0.25
"""A direction predicted to read below the leading one by a gap g gets an upper grid whose
predicted width is at most this share of g (``_spare``): its upper end then stays below the lead's
(otherwise it is composed again at h, ``composed._again_at_h``)."""

SPARE_MAX = 8.0
"""At most this much coarser (64 times less width-squared: past it the saving is in the fixed cost)."""

TILT_SHARE = 0.2
"""The composition is tilted where the untilted round-off would take more than this share of the
target width (``refine``'s rule for a pilot: a fifth of the width aimed for)."""

SMALLEST_DELTA = 1e-10
"""At a target ε, below this saddlepoint δ no width is predicted (the pilot and refinement decide):
a relative accuracy of so small a δ asks for widths the tilt, not h, decides."""

LARGEST_DELTA = 0.25
"""Above this saddlepoint δ no width is predicted either: δ is then not made in a tail, where the
approximation holds (it reads 1.0 at q = 0.0027, σ = 0.34, 21 steps, ε = 0.052)."""

TILT_DELTA = 1e-9
"""Below this δ a composition of laws with unbounded losses is tilted at the predicted ε in any case
(as ``refine.PRETILT_DELTA``)."""


@dataclass(frozen=True)
class Prediction:
    """Chosen width h, the saddlepoint ε at the target δ (the tilt point) and its θ."""

    h: float
    epsilon: float
    theta: float
    width: float
    """The width in ε predicted at h."""
    tilt: bool
    """Whether the untilted round-off bound would matter at the target (``round_off``)."""
    spare: tuple[int, float] | None = None
    """(lead, c): the other directions' upper grids at c·h (``_spare``, ``composed.compose``)."""
    stages: Stages | None = None
    """Composition in two stages, h the first stage's width (``_stages``, ``dpviz.pld.staged``)."""


def smooth(parts: Parts) -> bool:
    """True when every law has a continuous part and no mass at ±∞: the width law of the module
    applies. Atoms are allowed where the grid holds them exactly (``predict``'s ``lattice``: a
    Laplace law's two atoms on grid points, its continuous part between them)."""
    return all(law.continuous is not None and law.p_inf == 0 and law.q_neg_inf == 0 for law, _ in parts)


def _singles(parts: Sequence[tuple[LossLaw, int]], h: float, tail: float, pessimistic: bool,
             offsets: bool) -> list[tuple[GridPLD, int]]:
    """One step of each part as ``composed.compose`` discretises it (and keeps it for it)."""
    return [(composed.single_step(law, k, h=h, tail=tail, n_parts=len(parts), pessimistic=pessimistic,
                                  offsets=offsets), k) for law, k in parts]


def width_at(parts: Sequence[tuple[LossLaw, int]], h: float, theta: float, tail: float, *,
             offsets: bool = False) -> float:
    """The predicted width in ε of the composition at width h: Σ_i k_i·(Λ_pess,i(θ) − Λ_opt,i(θ))/θ
    over one step's two grids (module docstring)."""
    return _widths(parts, h, theta, tail, offsets)[0]


def _widths(parts: Sequence[tuple[LossLaw, int]], h: float, theta: float, tail: float,
            offsets: bool) -> tuple[float, float]:
    """(``width_at``, the part of it from Q-mass the optimistic grid does not keep: Σ_i k_i·(Λ_opt,i(−1)
    − Λ_pess,i(−1)), first order in the loss the post-processing's unbalanced symbols are stored below)."""
    w = unkept = 0.0
    for (up, k), (down, _k) in zip(_singles(parts, h, tail, True, offsets),
                                   _singles(parts, h, tail, False, offsets), strict=True):
        if not (up.mass.sum() > 0.0 and down.mass.sum() > 0.0):
            # a grid without finite P-mass (met in the planner's σ search for a subsampled Gaussian
            # at total ε = 0, q = 0.25, Δ = 0.25) has no cumulant, the width no estimate: 0, and the
            # pilot and refinement decide, as they did when 0/0 made it NaN
            return 0.0, 0.0
        w += k * _tilt_gap(up, down, theta)
        unkept += k * (_cumulant(down, -1.0) - _cumulant(up, -1.0))
    return max(w, 0.0), max(unkept, 0.0)


def _tilt_gap(up: GridPLD, down: GridPLD, theta: float) -> float:
    """(Λ_up(θ) − Λ_down(θ))/θ of one step's two grids at the saddlepoint's θ > 0, Λ the cumulant
    function of a grid's finite P-masses normalised to 1 (the tails beyond a grid are the tail
    budget's, not the width's); as θ → 0 it tends to the difference of the means, which the expm1
    form of ``_cumulant`` keeps without cancellation."""
    return (_cumulant(up, theta) - _cumulant(down, theta)) / theta


def _cumulant(g: GridPLD, theta: float) -> float:
    """ln Σ_j w_j e^{θx_j}, w the grid's masses over their sum: log1p of Σ w·expm1(θx) where every θx is
    small (absolute error ≈ u·θ·max|x|, so the gap of two grids keeps its digits as θ → 0), a
    log-sum-exp otherwise."""
    x, m = g.losses, g.mass
    w = m / float(m.sum())
    top = abs(theta) * float(np.abs(x).max(initial=0.0))
    if top < 1.0:
        return math.log1p(float(np.einsum("i,i->", w, np.expm1(theta * x))))
    keep = w > 0
    e = theta * x[keep] + np.log(w[keep])
    peak = float(e.max())
    return peak + math.log(float(np.exp(e - peak).sum()))


def round_off(parts: Sequence[tuple[LossLaw, int]], h: float, tail: float, theta: float,
              curvature: float, delta: float, *, offsets: bool = False) -> tuple[float, float]:
    """The round-off's share of the width in ε, (untilted, tilted at θ), to first order.

    ``power.compose_power`` charges E = K·κ·‖b‖₂, b(f) ≈ m(f)^{K−1}, of the (tilted, normalised)
    measure (§17.4, per frequency); for a step of variance v (in bins²) |φ(f)|^{2(K−1)} ≈
    e^{−(K−1)v(2πf/N)²}, so ‖b‖₂² ≈ N/(2√(π(K−1)v)), N the planned transform length
    (``grid.composed_bins``); never above the uniform bound K·κ·√N·‖w‖₂. At ε the error is E
    (untilted) or E·e^{Λ(θ) − θε} (tilted), and both ends of the interval move by err/|δ′(ε)|; by the
    saddlepoint approximation |δ′(ε)| ≈ δ·θ and e^{Λ(θ) − θε} ≈ δ·θ(1 + θ)·√(2πΛ″(θ))
    (``saddlepoint``)."""
    grids = _singles(parts, h, tail, True, offsets)
    n = composed_bins(grids)
    kappa = fft.FFT_C * fft.UNIT_ROUNDOFF * math.log2(max(n, 2))
    kk = sum(k for _, k in grids)
    plain = tilted = 0.0
    for g, _k in grids:
        x = g.losses / h
        for th in (0.0, theta):
            e = th * h * x + np.log(g.mass, out=np.full(g.mass.size, -np.inf), where=g.mass > 0)
            w = np.exp(e - e.max())
            w /= w.sum()
            var = max(float(np.einsum("i,i,i->", w, x, x)) - float(np.einsum("i,i->", w, x)) ** 2, 1e-300)
            spectral = math.sqrt(n / (2.0 * math.sqrt(math.pi * max(kk - 1, 1) * var)))
            bound = kk * kappa * min(math.sqrt(n) * fft.norm(w), spectral)
            if th == 0.0:
                plain = max(plain, bound)
            else:
                tilted = max(tilted, bound)
    return (2.0 * plain / (delta * max(theta, 1e-300)),
            2.0 * tilted * (1.0 + theta) * math.sqrt(2.0 * math.pi * curvature))


def predict(parts: Parts, *, delta: float | None = None, epsilon: float | None = None, accuracy: float,
            tail: float, budget: Budget | None = None, lattice: float | None = None, offsets: bool = False,
            stages: bool = True) -> Prediction | None:
    """h aiming at ``AIM`` of the width ``accuracy``·max(ε, 0.05) where ``smooth`` (None otherwise):
    a first guess from ``SECOND_MOMENT``, corrected by the measured width (``width_at``); the tilt
    where the untilted round-off would take more than ``TILT_SHARE`` of the width (or δ is below
    ``TILT_DELTA``), and the round-off's share taken off the width the discretisation may use.
    ``lattice``: every h tried divides it (the composition's atoms on grid points, ``lattice.anchor``);
    ``offsets``: the grids shifted as the composition's will be (``composed.single_step``);
    ``stages``: two stages may be chosen (``_stageable``).

    At a target ε instead of δ (δ at ε, relative ``accuracy``): by the saddlepoint approximation ln δ
    falls by s = θ + (1/θ + 1/(1 + θ))/Λ″(θ) per unit of ε, so the width aimed at in ε is accuracy/s,
    at the direction whose δ is the larger (``saddlepoint_at``); one stage, all directions at h
    (docs/MATH.md §17.9)."""
    if not smooth(parts):
        return None
    if epsilon is not None:
        return _predict_at_epsilon(parts, epsilon=epsilon, accuracy=accuracy, tail=tail, budget=budget,
                                   lattice=lattice, offsets=offsets)
    assert delta is not None
    best: tuple[float, float, float, list[tuple[LossLaw, int]]] | None = None
    reads = []
    for d in directions(parts):
        eps, theta, curvature = saddlepoint(d, delta, tail)
        reads.append(eps)
        if best is None or eps > best[0]:
            best = (eps, theta, curvature, d)
    assert best is not None
    eps, theta, curvature, dom = best
    if not (math.isfinite(eps) and eps > 0):
        return None
    target = accuracy * max(eps, 0.05)
    kk = sum(k for _, k in dom)
    first = math.sqrt(2.0 * AIM * target / (SECOND_MOMENT * kk * (1.0 + theta)))

    def measured(share: float) -> Measured | None:
        return _measure(parts, dom, share, first=first, target=target, theta=theta, curvature=curvature,
                        delta=delta, tail=tail, budget=budget, lattice=lattice, offsets=offsets)

    found, plan = _in_stages(measured, dom, first=first, theta=theta, tail=tail, lattice=lattice,
                             stages=stages)
    if found is None:
        return None
    h, w, tilt, aim = found
    return Prediction(h=h, epsilon=eps, theta=theta, width=w, tilt=tilt,
                      spare=_spare(reads, h, w if plan is None else aim, lattice), stages=plan)


Measured = tuple[float, float, bool, float]
"""(h, its measured width, tilt, the width aimed at): ``_measure``'s answer."""


def _in_stages(measured: Callable[[float], Measured | None], dom: Sequence[tuple[LossLaw, int]], *,
               first: float, theta: float, tail: float, lattice: float | None,
               stages: bool) -> tuple[Measured | None, Stages | None]:
    """The width measured for one stage, or for the first of two (``_stageable``: the widths measured
    are then the first stage's, aiming at its share ``STAGE_SHARE``), and the two stages' plan."""
    staging = stages and _stageable(dom, composed.on_lattice(min(0.05, first), lattice), tail)
    found = measured(STAGE_SHARE if staging else 1.0)
    plan = None
    if found is not None and staging:
        h, w, _tilt, aim = found
        plan = _stages(dom, h, aim - w, theta)
        if plan is None:  # the first stage leaves the second no width (e.g. h at the steps' precision
            found = measured(1.0)  # floor, where a finer grid is wider): one stage, measured as such
    return found, plan


def _measure(parts: Parts, dom: Sequence[tuple[LossLaw, int]], share: float, *, first: float, target: float,
             theta: float, curvature: float, delta: float, tail: float, budget: Budget | None,
             lattice: float | None, offsets: bool, monotone: bool = False) -> Measured | None:
    """(h, its measured width, tilt, the width aimed at) for the discretisation's ``share`` of the width
    ``target`` (in ε; the first stage's share in two stages), starting from the guess ``first``; None
    where the budget or the steps refuse. ``dom``: the direction the width is measured on, at the
    saddlepoint θ (curvature Λ″(θ), δ there). ``monotone``: None as well where a finer h measured
    wider than a coarser one (h does not set the width there: the pilot and refinement decide)."""
    unbounded = all(math.isinf(law.max_loss()) for law, _ in parts)
    h = composed.on_lattice(min(0.05, first * math.sqrt(share)), lattice)
    aim = AIM * target
    seen: list[tuple[float, float]] = []
    for attempt in range(MEASUREMENTS):
        # (None: an upper bound of the estimate is within the budget, ``cost.above_bound``)
        estimate = above_bound(parts, h=h, tail=tail, budget=budget) if share == 1.0 \
            else first_stage_cost(parts, h, tail)
        try:  # the single steps at h are discretised: only within the budget the composition has
            if estimate is not None:
                budgets.check(estimate, budget)
        except (OverBudget, ParameterError):
            return None  # the pilot and refinement coarsen within it
        w, unkept = _widths(dom, h, theta, tail, offsets)
        if not w > 0:
            return None  # the steps are not smooth on this grid: the pilot and refinement decide
        if monotone and any(hh > h and ww < w for hh, ww in seen):
            return None
        seen.append((h, w))
        if lattice is not None and unkept > UNKEPT_SHARE * w:
            # the width is mostly Q-mass the optimistic grid lost beside an atom: whether the
            # post-processing's last symbol there is balanced depends on the parity of the cells
            # between atoms (§17.9), so the next finer divisor is measured too, the narrower kept
            finer = lattice / (round(lattice / h) + 1)
            try:
                check_cost(parts, h=finer, tail=tail, budget=budget)  # the same decision
                w_finer = width_at(dom, finer, theta, tail, offsets=offsets)
            except (OverBudget, ParameterError):
                w_finer = math.inf
            if 0.0 < w_finer < w:
                h, w = finer, w_finer
        plain, tilted = round_off(dom, h, tail, theta, curvature, delta, offsets=offsets)
        tilt = (unbounded and delta < TILT_DELTA) or plain > TILT_SHARE * target
        aim = max(AIM * target - (tilted if tilt else plain), 0.25 * AIM * target)
        if 0.5 * share * aim <= w <= 1.15 * share * aim or attempt == MEASUREMENTS - 1:
            break  # h is the width measured last
        h = composed.on_lattice(min(0.05, h * min(4.0, max(0.25, math.sqrt(share * aim / w)))), lattice)
    return h, w, tilt, aim


def _predict_at_epsilon(parts: Parts, *, epsilon: float, accuracy: float, tail: float, budget: Budget | None,
                        lattice: float | None, offsets: bool) -> Prediction | None:
    """``predict`` at a target ε: the width in ε that moves ln δ by ``accuracy``, measured
    on the direction whose saddlepoint δ is the larger; None where a direction has no saddlepoint
    above its mean loss (the pilot and refinement decide)."""
    best: tuple[float, float, float, list[tuple[LossLaw, int]]] | None = None
    for d in directions(parts):
        at = saddlepoint_at(d, epsilon, tail)
        if at is None:
            return None
        if best is None or at[0] > best[0]:
            best = (*at, d)
    assert best is not None
    delta, theta, curvature, dom = best
    if not SMALLEST_DELTA <= delta <= LARGEST_DELTA:
        return None
    # −d ln δ/dε of the saddlepoint approximation: θ, and its prefactor's 1/(θ(1 + θ)) moving with
    # θ (dθ/dε = 1/Λ″): the ε-width that moves ln δ by the accuracy
    slope = theta + (1.0 / theta + 1.0 / (1.0 + theta)) / curvature
    target = accuracy / slope
    kk = sum(k for _, k in dom)
    first = math.sqrt(2.0 * AIM * target / (SECOND_MOMENT * kk * (1.0 + theta)))

    found = _measure(parts, dom, 1.0, first=first, target=target, theta=theta, curvature=curvature,
                     delta=delta, tail=tail, budget=budget, lattice=lattice, offsets=offsets, monotone=True)
    if found is None:
        return None
    h, w, tilt, _aim = found
    return Prediction(h=h, epsilon=epsilon, theta=theta, width=w, tilt=tilt)


STAGE_BINS = 90_000
"""A composition whose grid at the first stage's width would have more bins than this (as
``cost.planned_bins`` sizes it from coarse grids: about 2.5 times the window used) is composed in two
stages (``_stageable``). Below it the transforms are a small part of the time and the second stage's
fixed cost does not pay: 12–30 ms slower at 42,000–65,000, 10–80 % faster from 92,000 up, on the
benchmark's subsampled Gaussians (issue 23)."""

STAGE_SHARE = 0.5
"""Share of the width the first stage may take (the rest is the second stage's)."""

COARSE_STEP = 0.5
"""(Λ_pess − Λ_opt)/θ of a step at the second width, in units of h₂²(1 + θ)/2, for the remainder's
single steps (a law narrower than a cell: the chord's error is at most h²/8 per grid and tilt unit)."""


def _stageable(parts: Sequence[tuple[LossLaw, int]], h: float, tail: float) -> bool:
    """True for one law without atoms whose composed grid at h would have more than ``STAGE_BINS``
    bins (sized from coarse discretisations, ``cost.planned_bins``): worth two stages (§17.10)."""
    if len(parts) != 1 or any(law.loss.size and np.any(law.p > 0) for law, _ in parts):
        return False
    try:
        return planned_bins(parts, h=h, tail=tail, cells=COST_CELLS) > STAGE_BINS
    except ParameterError:
        return False


def _stages(parts: Sequence[tuple[LossLaw, int]], h1: float, left: float, theta: float) -> Stages | None:
    """m ≈ √k steps (``staged.near_divisor``) composed at h₁, then at r·h₁ with r from the width
    ``left`` to the second stage: ⌊k/m⌋ steps of a smooth law (``SECOND_MOMENT``) and k mod m single
    steps (``COARSE_STEP``) at h₂ (docs/MATH.md §17.10). None where r < 2."""
    kk = parts[0][1]
    m = staged.near_divisor(kk, max(2, round(math.sqrt(kk))))
    copies, rest = divmod(kk, m)
    if not left > 0:
        return None
    h2 = math.sqrt(2.0 * left / ((copies * SECOND_MOMENT + rest * COARSE_STEP) * (1.0 + theta)))
    stages = Stages(m, int(h2 / h1))
    return stages if stages.applies(kk) else None


def _spare(reads: Sequence[float], h: float, w: float, lattice: float | None) -> tuple[int, float] | None:
    """(lead, c): the directions other than the one predicted to read the largest ε may be composed at
    width c·h where ``SPARE_SHARE`` of the predicted gap to it covers their width there (∝ h²), at
    most ``SPARE_MAX``·h and on the lattice; None where that is not at least twice as coarse."""
    if len(reads) < 2 or not all(math.isfinite(r) for r in reads):
        return None
    lead = max(range(len(reads)), key=lambda i: reads[i])
    gap = reads[lead] - max(r for i, r in enumerate(reads) if i != lead)
    if not (gap > 0 and w > 0):
        return None
    coarse = composed.on_lattice(h * min(SPARE_MAX, math.sqrt(SPARE_SHARE * gap / w)), lattice)
    return (lead, coarse / h) if coarse >= 2.0 * h else None
