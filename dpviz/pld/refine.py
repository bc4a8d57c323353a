"""Choosing the grid of a PLD composition: width, tilt and truncation for a target (docs/MATH.md §7.4, §16).

``composition`` returns composed grids (``dpviz.pld.composed``) for a target δ (or ε) whose certified
interval is within ``accuracy``: atoms-only laws on a common lattice use that lattice (exact); laws
with a continuous part the width predicted from the single steps for the target δ or ε (on a divisor
of their atoms' lattice; ``dpviz.pld.predict``, docs/MATH.md §17.9), refined only if it misses;
otherwise a pilot width from the single steps' spread, refined by the second-order error law (width
∝ h²) until the interval is narrow enough or the next grid is over the budget. Where the round-off
bound widens the interval, the transforms are redone on masses tilted by the Chernoff θ of the target
(``dpviz.pld.power``), so that the round-off is relative to the tail δ is made of; a pilot that
misses the accuracy is not redone, the tilt applies from its first refinement on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from dpviz.budget import Budget, OverBudget
from dpviz.pld.composed import Composed, coarsening, compose, on_lattice
from dpviz.pld.cost import Parts, coarse_grid, cost, cost_above
from dpviz.pld.lattice import anchor, common_lattice, stride
from dpviz.pld.law import LossLaw
from dpviz.pld.pilot import pilot_h
from dpviz.pld.power import tail_point
from dpviz.pld.predict import Prediction, predict
from dpviz.pld.staged import Stages
from dpviz.validation import ParameterError, check_count, check_positive

DOMINANT_AT_EPSILON = True
"""δ at a target ε: only the direction with the largest upper δ gets a lower grid (``composed._dominant``),
as at a target δ."""

DEFAULT_ACCURACY = 2e-4
"""Relative width of the certified interval aimed for when no grid width is given (and 1e-5
absolute where ε < 0.05): issue 23's target, reachable now that a composition is one transform."""


def checked_parts(parts: Parts) -> list[tuple[LossLaw, int]]:
    if not parts:
        raise ParameterError("mechanisms", "[]", "a non-empty list of (loss law, count) parts")
    return [(law, check_count(k, field="k")) for law, k in parts]


def _fits(exc: Exception) -> bool:
    """True for a refusal that a coarser grid may avoid (over budget, or too many bins: field "h")."""
    return isinstance(exc, OverBudget) or (isinstance(exc, ParameterError) and exc.field == "h")


@dataclass
class _Target:
    """One request: the parts, the target (δ or ε), the accuracy and budget, and the tilt and grid
    shifts in use (the tilt is decided after the pilot grid)."""

    parts: list[tuple[LossLaw, int]]
    delta: float | None
    epsilon: float | None
    accuracy: float
    budget: Budget | None
    tail: float
    tilt: float | None = None
    offsets: bool = False
    spare: tuple[int, float] | None = None
    """The predicted lead direction and how much coarser the others' upper grids may be (``predict``)."""
    stages: Stages | None = None
    """Two-stage composition (``dpviz.pld.staged``), chosen with the width (``predict``)."""

    def run(self, h: float) -> Composed:
        return compose(self.parts, h=h, tail=self.tail, budget=self.budget, total=True, tilt=self.tilt,
                       offsets=self.offsets, lower_at=self.delta,
                       lower_at_epsilon=self.epsilon if DOMINANT_AT_EPSILON else None, spare=self.spare,
                       stages=self.stages)

    def ratio(self, c: Composed) -> float:
        return _width_ratio(c, delta=self.delta, epsilon=self.epsilon, accuracy=self.accuracy)

    def tilted(self, c: Composed) -> Composed:
        """``c`` recomputed with the round-off tilted towards the target, if that is narrower."""
        self.choose_tilt(c)
        return self.retilted(c)

    def choose_tilt(self, c: Composed) -> None:
        """Decide the tilt from ``c`` (None where its round-off is minor), without recomputing."""
        if _round_off_minor(c, delta=self.delta, epsilon=self.epsilon, accuracy=self.accuracy):
            return
        self.tilt = _tilt(self.parts, c, delta=self.delta, epsilon=self.epsilon, accuracy=self.accuracy)

    def retilted(self, c: Composed) -> Composed:
        """``c`` (computed untilted) recomputed at its width with the tilt in use, if that is
        narrower; otherwise the tilt is dropped."""
        if self.tilt is None:
            return c
        t = self.run(c.h)
        # a tilted grid whose round-off bound is not finite says nothing (review R1): its [0, 0]
        # would look narrowest, so it is rejected before any width is compared
        if _informative(t) and self.ratio(t) <= self.ratio(c):
            return t
        self.tilt = None
        return c

    def late_tilt(self, c: Composed) -> Composed:
        """A finer grid carries more round-off than the pilot that decided against tilting: where the
        refinement stopped short of the accuracy, the last grid is recomputed tilted if that is
        narrower (q = 0.004, σ = 1, 10^5 steps, δ = 1e-6: 1.04e-3 wide untilted)."""
        if self.tilt is not None or self.ratio(c) <= 1.0:
            return c
        try:
            return self.tilted(c)
        except (OverBudget, ParameterError) as exc:
            if _fits(exc):
                return c
            raise


def composition(parts: Parts, *, delta: float | None = None, epsilon: float | None = None,
                accuracy: float = DEFAULT_ACCURACY, h: float | None = None,
                budget: Budget | None = None) -> Composed:
    """The composed upper and lower grids for a target δ (or ε), at width ``h`` or at one chosen
    from ``accuracy``; raises ``OverBudget`` / ``ParameterError`` (field "h") when they do not fit.

    Truncation: all truncations together may move ``target_tail`` mass (a small part of δ·accuracy).
    Width: module docstring; the interval is within ``accuracy`` (relative; absolute accuracy/10
    below ε = 0.1) or the next refinement is over ``budget`` (the last, wider but certified, grids
    are returned)."""
    parts = checked_parts(parts)
    accuracy = check_positive(accuracy, field="accuracy", maximum=1.0)
    tail = target_tail(parts, delta=delta, epsilon=epsilon, accuracy=accuracy)
    req = _Target(parts, delta, epsilon, accuracy, budget, tail)
    if h is not None:
        return req.tilted(req.run(check_positive(h, field="h", maximum=10.0)))
    lattice = common_lattice(parts)
    if lattice is not None and all(law.continuous is None for law, _ in parts):
        m = stride(parts, lattice)  # atoms on every m-th lattice point: grids shifted onto them
        req.offsets = m > 1
        return req.tilted(coarsening(m * lattice, req.run))
    if lattice is None:
        lattice = anchor(parts)
        req.offsets = True
    predicted = _predicted(req, lattice) if delta is not None or (
        PREDICT_EPSILON_TARGET and epsilon is not None) else None
    if predicted is not None:
        return predicted
    hh = pilot_h(parts)
    if lattice is not None:
        hh = on_lattice(hh, lattice)
    if delta is not None and 0 < delta < PRETILT_DELTA \
            and all(math.isinf(law.max_loss()) for law, _ in parts):
        req.tilt = chernoff_epsilon(parts, delta)
    try:
        c = req.run(hh)
    except (OverBudget, ParameterError) as exc:
        if _fits(exc):
            return req.tilted(coarsening(hh * 2, req.run))
        raise
    if req.tilt is not None:  # tilted from the start: the refinement keeps it
        if _informative(c):
            return _refine(req, c, hh, lattice)
        req.tilt = None  # review R1: an infinite round-off bound says nothing; untilted as usual
        c = req.run(hh)
    aim = req.ratio(_bare(c))
    ratio = req.ratio(c)
    h_next = on_lattice(hh * max(STEP_FLOOR, 0.75 / math.sqrt(max(aim, 1.0))), lattice)
    trusted = ratio <= 2.0 * aim  # the round-off bound widens the pilot by at most its own width
    if ratio <= 1.0 or not 1.0 < aim < math.inf or (
            not trusted and cost_above(req.parts, PENDING_SECONDS, h=h_next, tail=req.tail)):
        # within the target, missing it only by the round-off bound, or a dear next grid stepped
        # from a pilot whose round-off dominates: the tilted pilot decides the step (q = 6.1e-4,
        # σ = 0.704, 414 steps, δ = 4e-11: untilted its width is ∞, tilted 0.04 of the target;
        # stepping from the untilted pilot cost 2.4 s)
        return _refine(req, req.tilted(c), hh, lattice)
    # a cheap refinement, or a pilot whose width without the round-off bound is sound to step from
    # (its masses zeroed below the round-off move δ by at most that bound, so by at most the width
    # it reads; q = 0.01, σ = 11.8, 10^5 steps, δ = 1e-5: 21 with, 12.8 without): the tilt is decided
    # from the pilot and used from the next grid on, so the pilot is not recomputed tilted (one
    # composition fewer, issue 23)
    req.choose_tilt(c)
    return _refine(req, c, hh, lattice, pending=req.tilt is not None)


PREDICT_EPSILON_TARGET = True
"""δ at a target ε also starts at a predicted width (``predict``'s ε target), not at a pilot."""


def _predicted(req: _Target, lattice: float | None) -> Composed | None:
    """The composition at the predicted width (``_at_prediction``), None without a prediction. Two
    stages that miss the accuracy (a law far from its saddlepoint: q = 1e-4, σ = 0.6, 10⁶ steps) are
    followed by the one-stage route, as before them, and the narrower kept (a δ target only: at a
    target ε the prediction is one stage)."""
    staged: Composed | None = None
    for stages in (True, False):
        guess = predict(req.parts, delta=req.delta, epsilon=req.epsilon if req.delta is None else None,
                        accuracy=req.accuracy, tail=req.tail, budget=req.budget, lattice=lattice,
                        offsets=req.offsets, stages=stages)
        if guess is None:
            return None
        c = _at_prediction(req, guess, lattice)
        if req.stages is None or req.ratio(c) <= 1.0:
            return c if staged is None or req.ratio(c) <= req.ratio(staged) else staged
        staged, req.stages, req.tilt = c, None, None
    return staged


def _at_prediction(req: _Target, guess: Prediction, lattice: float | None) -> Composed:
    """One composition at the predicted width (``dpviz.pld.predict``), tilted at the predicted ε
    where the untilted round-off would matter; refined by the h² law only if it misses the
    accuracy (docs/MATH.md §17.9), and then not in two stages (``_predicted``)."""
    if guess.tilt:
        req.tilt = guess.epsilon
    req.spare = guess.spare
    req.stages = guess.stages
    try:
        c = req.run(guess.h)
    except (OverBudget, ParameterError) as exc:
        if _fits(exc):
            return req.tilted(coarsening(guess.h * 2, req.run))
        raise
    if req.tilt is not None and not _informative(c):  # review R1: an infinite bound says nothing
        req.tilt = None
        c = req.run(guess.h)
    if req.ratio(c) <= 1.0 or req.stages is not None:
        return c
    return _refine(req, c, guess.h, lattice)


def _refine(req: _Target, c: Composed, hh: float, lattice: float | None, *,
            pending: bool = False) -> Composed:
    """Refine the width from the pilot ``c`` (at ``hh``) by the h² law (module docstring).

    ``pending``: ``c`` was composed untilted although ``req.tilt`` is set (``composition``); its
    width without the round-off bound then sets the step (the tilted grids that follow carry little
    of it), and it is recomputed tilted if it is what is returned."""
    h1 = hh
    best, best_ratio = c, req.ratio(c)
    aim = req.ratio(_bare(c)) if pending else best_ratio  # the ratio the h² law steps from

    def finish(b: Composed) -> Composed:
        if pending and b is c and req.tilt is not None:
            try:
                return req.retilted(b)
            except (OverBudget, ParameterError) as exc:
                if _fits(exc):
                    return b
                raise
        return req.late_tilt(b)

    past = 0  # refinements past the accuracy so far
    for i in range(REFINEMENTS + CHEAP_REFINEMENTS):
        accurate = best_ratio <= 1.0
        if accurate:
            if past >= CHEAP_REFINEMENTS:
                break
            past += 1
        elif req.tilt is not None and not (pending and best is c) \
                and _set_by_round_off(req, best, best_ratio):
            break  # a finer grid would narrow it by less than the stop below asks: not computed
        step = 1.0 / 4.0 if accurate else min(1.0, max(STEP_FLOOR, 0.75 / math.sqrt(max(aim, 1e-300))))
        last, hh = hh, on_lattice(hh * step, lattice)
        # cheap: the next grid's estimated cost (``cost``: counted work, not a measured time, so the
        # same question always gets the same grid) is below CHEAP_SECONDS; then refine even past the
        # accuracy target and the h1/8 floor, else only towards the target
        if cost_above(req.parts, CHEAP_SECONDS, h=hh, tail=req.tail):
            if accurate:  # past the accuracy a half step (4× narrower) is taken if that one is cheap
                hh = on_lattice(last / 2.0, lattice)
                if cost_above(req.parts, CHEAP_SECONDS, h=hh, tail=req.tail):
                    break
            elif i >= REFINEMENTS:
                break
            else:
                hh = on_lattice(max(hh, h1 / 8.0), lattice)
        if hh >= 0.99 * last:  # no finer width allowed (h1/8 reached)
            break
        try:  # a finer grid carries more round-off: tilted where it is not minor (``_Target.tilted``)
            if req.tilt is None and accurate:  # past the target: no tilted rerun, ``best`` stands
                c_new = req.run(hh)
            elif req.tilt is None:
                c_new = req.tilted(req.run(hh))
            else:
                c_new = req.run(hh)
                if not _informative(c_new):  # review R1: an infinite round-off bound says nothing
                    req.tilt = None
                    c_new = req.run(hh)
        except (OverBudget, ParameterError) as exc:
            if _fits(exc):
                b = finish(best)
                return b if req.ratio(b) <= 1.0 else replace(b, note="accuracy not reached within the budget")
            raise
        ratio = req.ratio(c_new)
        if ratio > SET_BY_H * aim:  # the width is no longer set by h (round-off, tails)
            return finish(c_new if ratio < best_ratio else best)
        best, best_ratio, aim = c_new, ratio, ratio
    return finish(best)


def _set_by_round_off(req: _Target, c: Composed, ratio: float) -> bool:
    """True when the round-off bound of ``c``, composed tilted, is more than ``1 − SET_BY_H`` of its
    width: h sets the rest, so a finer grid narrows the interval by less than that share, the
    refinement's own stop (``ratio > SET_BY_H·aim``), while its round-off bound, already tilted, does
    not shrink with h (‖b‖₂² ≈ N/(2√(π(K − 1)v)) is about constant: N ∝ 1/h, √v ∝ 1/h; §17.4).
    q = 4.4e-4, σ = 1, 781 steps, δ at ε = 0.31 (δ ≈ 1.3e-11): the finer grid cost 0.48 s and
    read 333 times the target against the tilted pilot's 296."""
    return math.isfinite(ratio) and req.ratio(_bare(c)) <= (1.0 - SET_BY_H) * ratio


def _informative(c: Composed) -> bool:
    """True when every grid's round-off bound is finite (review R1: otherwise its reading says nothing)."""
    return all(g.informative for g in c.upper + c.lower)


def _round_off_minor(c: Composed, *, delta: float | None, epsilon: float | None, accuracy: float) -> bool:
    """True when the round-off bound widens the interval by less than a fifth of the width aimed for
    (the same grids read without it): the refinements that follow shrink only the discretisation
    part, so a tilted rerun is not needed (q = 0.01, σ = 1, 10^5 steps: a 0.2 s rerun no narrower).
    Only decides whether to recompute; the grids returned keep their bound."""
    grids = c.upper + c.lower
    if all(g.err == 0.0 for g in grids) or not all(g.informative for g in grids):
        return all(g.err == 0.0 for g in grids)
    bare = _bare(c)
    with_err = _width_ratio(c, delta=delta, epsilon=epsilon, accuracy=accuracy)
    without = _width_ratio(bare, delta=delta, epsilon=epsilon, accuracy=accuracy)
    return math.isfinite(with_err) and with_err - without <= 0.2


def _bare(c: Composed) -> Composed:
    """The same grids read without their round-off bound (to decide what to compute, never reported)."""
    return replace(c, upper=tuple(replace(g, err=0.0, _cache={}) for g in c.upper),
                   lower=tuple(replace(g, err=0.0, _cache={}) for g in c.lower))


def _tilt(parts: Parts, c: Composed, *, delta: float | None, epsilon: float | None,
          accuracy: float) -> float | None:
    """The loss ε the round-off bound is tilted at (``compose_power`` takes the Chernoff θ of each
    direction's composed law there), or None when the untilted round-off is below accuracy/100 of δ
    at the target. For a δ target ε is the grids' upper end, or where it is missing the Chernoff
    bound's ε (a tilt chosen for too small an ε leaves the round-off far above δ)."""
    grids = c.upper + c.lower
    if all(g.err == 0.0 for g in grids):
        return None
    eps: float | None
    if epsilon is None:
        if delta is None:
            return None
        _lo, eps = _bare(c).epsilon(delta)  # where δ is made, whatever the round-off bound says
        if eps is not None and max(g.err_at(0.0) for g in grids) < 1e-2 * accuracy * delta:
            return None
    else:
        eps = epsilon
        if max(g.err_at(0.0) for g in grids) < 1e-2 * accuracy * max(c.delta(eps)[0], 1e-300):
            return None
    if eps is not None:
        return eps
    return chernoff_epsilon(parts, delta if delta is not None else 1e-10)


def chernoff_epsilon(parts: Parts, delta: float) -> float:
    """An ε with P(L > ε) ≤ δ for the composed loss (so δ(ε) ≤ δ): the Chernoff bound
    min over t of (Σ k ln E[e^{tL}] − ln δ)/t (``power.tail_point``) on coarse single-step grids (a
    place to tilt at, never a reported bound)."""
    singles = [(coarse_grid(law, max((hi_ - lo_) / 4096, 1e-9), 1e-12), k)
               for law, k in parts for lo_, hi_ in [law.support(1e-12)]]
    return tail_point(singles, math.log(delta))


PRETILT_DELTA = 1e-9
"""Below this target δ the pilot itself is tilted, at the Chernoff ε (``chernoff_epsilon``): an
untilted pilot's round-off bound (≈ K·κ·√N of the total mass) is then above δ, its width infinite or
dominated by it, and it was recomputed tilted at the same width (q = 8.7e-4, σ = 2.68, 6,458 steps,
δ = 5.1e-12: three compositions where two do). Only for laws with unbounded losses (Gaussian tails),
where the Chernoff ε is close: for bounded ones it can sit far above the true ε (subsampled Laplace,
b = 2, q = 0.1, 1000 steps, δ = 1e-10: 23 for 10.28), and a tilt there left no useful lower end."""


TILT_EXPONENT = 300.0
"""Largest θ·|loss| of a single step scanned when a Chernoff ε is needed for the tilt."""


SET_BY_H = 0.7
"""A refinement that leaves the width above this share of what it was is the last: the width is no
longer set by h (round-off, tails). Also decided before a finer grid where the round-off bound is
known to take the rest (``_set_by_round_off``)."""

REFINEMENTS = 3
"""At most this many grids are composed while refining h towards the accuracy."""

STEP_FLOOR = 1.0 / 6.0
"""Smallest factor h is refined by in one step. The step aims at 0.75 of the accuracy by the h²
law (0.75/√ratio): the width also has a part h does not set (round-off, tails), so aiming at the
accuracy itself (q = 3.3e-4, σ = 1.56, 8·10^5 steps: h/4 gave 1.16× the accuracy) costs a second,
finer refinement, while a floor of 1/4 forced it."""

CHEAP_SECONDS = 0.015
"""A refinement (h/4, width ∝ h²: 16× narrower) whose estimated time is below this is done even
when the accuracy is already reached: cheap cases end far tighter than ``DEFAULT_ACCURACY``
(Laplace b = 2, k = 20, δ = 1e-6: 6.6e-4 → 2e-6 relative), while the accuracy stays the stopping
rule of expensive ones. 0.015 s (estimated; about twice that measured): at 0.03 s refinements past
the target were most of the time of subsampled Laplace and were slower than dp-accounting (issue 23)."""

PENDING_SECONDS = 0.03
"""A pilot whose round-off is not minor is recomputed tilted before the refinement when the next
grid's estimated time is above this (``composition``); below, the tilt applies from the next grid on."""

CHEAP_REFINEMENTS = 1
"""At most this many cheap refinements beyond ``REFINEMENTS``. One (16× narrower than the target at
least) is all the tests and the benchmark need; three were up to half the time of small subsampled
Laplace and Gaussian settings, where each composition's fixed cost dominates (issue 23)."""


def target_tail(parts: Parts, *, delta: float | None, epsilon: float | None, accuracy: float) -> float:
    """Mass all truncations together may move: δ·accuracy/10 (it adds at most that to δ, shifting
    ε by a small part of the accuracy), within [1e-30, 1e-9]; 1e-18 for an ε target."""
    if delta is None or delta <= 0:
        return 1e-18
    return min(1e-9, max(1e-30, delta * accuracy / 10.0))


def _width_ratio(c: Composed, *, delta: float | None, epsilon: float | None, accuracy: float) -> float:
    """Width of the interval over the width aimed for (≤ 1: accurate enough)."""
    if delta is not None:
        lo, up = c.epsilon(delta)
        if lo is None:
            return 0.0
        if up is None:
            return math.inf
        return (up - lo) / (accuracy * max(up, 0.05))
    lo_d, up_d = c.delta(epsilon if epsilon is not None else 0.0)
    if up_d <= 0:
        return 0.0
    return (up_d - lo_d) / (accuracy * up_d)


REFINE_GRIDS = 2.0
"""The refinement's work in units of its finest grid's: the pilot and coarser widths (each ≥ 4×
wider, so cheaper) and a tilted rerun come to about as much again (measured 0.5 to 2× of the wall
time, Gaussian at q from 0.001 to 0.3 and k from 100 to 10^5)."""


def finest_grid_seconds(parts: Parts, *, delta: float | None, epsilon: float | None) -> float | None:
    """Estimated time (``dpviz.budget`` units, no clock) of the refinement's finest regular grid,
    1/8 of ``pilot_h``, at the target's tail (``dpviz.pld.cost.cost``); None when no grid that fine
    fits (the refinement then coarsens within its budget). Times ``REFINE_GRIDS``: the refinement's."""
    tail = target_tail(parts, delta=delta, epsilon=epsilon, accuracy=DEFAULT_ACCURACY)
    try:
        return cost(parts, h=pilot_h(parts) / 8.0, tail=tail).seconds
    except ParameterError:
        return None
