"""Run an attack: sample the statistic under both hypotheses, test at every threshold, certify ε.

``run_attack`` is a pure function of the ``Attack`` (the seed included): the same setting gives the
same numbers, so callers may cache by it. ``progress`` (optional) is called with the fraction done
after every chunk of trials.
"""

from __future__ import annotations

import functools
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpviz import budget as budgets
from dpviz.attack import binned as B
from dpviz.attack import curve as C
from dpviz.attack import sampling as S
from dpviz.attack import theory
from dpviz.attack.setting import Attack, step_draws
from dpviz.budget import Budget, Cost, cost_of
from dpviz.guarantee import Guarantee, Kind, Status, finite_or_none
from dpviz.pld.law import LossLaw
from dpviz.validation import ParameterError

CURVE_POINTS = 2000
"""Most thresholds kept for the drawn and exported curve."""

BOXES = 40
"""Most Clopper–Pearson boxes drawn along the curve."""

PREVIEW = 12
"""Trials per hypothesis kept as they came (the worked example shows them)."""

THEORY_CACHED = 32
"""Settings whose proven ε and trade-off curve are kept (``theory_of``; a few arrays each)."""

TRIALS_KEPT = 2
"""Settings whose trials are kept (``trials_of``): their samples and error curve."""

TRIALS_KEPT_BYTES = 32 * 2**20
"""Samples larger than this (both hypotheses' statistics: two float arrays of N trials, N above about
2·10^6) are not kept."""

SAMPLERS_KEPT = 4
"""Settings whose sampler is kept (``sampler_for``): a binned one holds its composed law's CDFs."""

CHUNK_TRIALS = 1 << 18
"""Trials per progress step for samplers whose cost does not grow with k."""


def sampler_for(a: Attack, *, per_step: bool = False) -> S.Sampler:
    """The cheapest sampler of a valid statistic (``dpviz.attack.sampling``): the exact loss sum
    where one draw per trial does it; for Laplace and subsampled mechanisms the binned
    post-processing's composed law (docs/MATH.md §14.5), or with ``per_step`` every step drawn.
    Made once per law (``SAMPLERS_KEPT``): the seed, N, δ and the confidence do not change what is
    sampled, and a sampler draws only from the generator it is given (issue 20: the binned law's
    composition, 1-3 ms, was made again for every new seed or N)."""
    return _sampler(replace(a, seed=0, trials=1, delta=0.0, confidence=0.95), per_step)


@functools.lru_cache(maxsize=SAMPLERS_KEPT)
def _sampler(a: Attack, per_step: bool) -> S.Sampler:
    """``sampler_for`` of a setting whose seed, N, δ and confidence are set to one value."""
    binned = None if per_step else binned_law(a)
    if binned is not None:
        law, lattice = binned
        return S.binned_sum(B.composed_law(law, a.k, lattice), a.k)
    if a.prior == "uniform":
        return S.uniform_prior_count(dict(a.params)["eps0"], a.k)
    mech = a.accountable()
    if a.sampling_rate is None:
        fast = mech.loss_sum(a.k)
        if fast is not None:
            return S.of_sum(fast, a.k)
        if mech.law.continuous is None:
            return S.finite_sum(mech.law, a.k, mech.grid_unit)
    base = mech.base if a.sampling_rate is not None else mech
    step = base.loss_draw()
    if a.sampling_rate is not None:
        step = S.subsampled_step(step, a.sampling_rate)
    return S.summed(step, a.k)


def binned_law(a: Attack) -> tuple[LossLaw, float | None] | None:
    """``binned.law_of`` the attack's mechanism; None under the uniform prior (counted, not binned)."""
    return None if a.prior == "uniform" else B.law_of(a.accountable(), sampling_rate=a.sampling_rate)


def sample(a: Attack, progress: Callable[[float], None] | None = None, *, per_step: bool = False
           ) -> tuple[NDArray[np.float64], NDArray[np.float64], S.Sampler]:
    """(statistic under H0, statistic under H1, sampler): ``trials`` each, from ``seed``."""
    sampler = sampler_for(a, per_step=per_step)
    rng = np.random.default_rng(a.seed)
    per_chunk = max(1, int(S.CHUNK_DRAWS // max(1.0, a.k * sampler.step_fraction))) if sampler.per_step \
        else CHUNK_TRIALS
    out = {True: np.empty(a.trials), False: np.empty(a.trials)}
    done, total = 0, 2 * a.trials
    for under_p in (True, False):
        for start in range(0, a.trials, per_chunk):
            m = min(per_chunk, a.trials - start)
            out[under_p][start:start + m] = sampler.draw(rng, m, under_p)
            done += m
            if progress is not None:
                progress(done / total)
    return out[True], out[False], sampler


def curve_thresholds(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Every distinct observed value when there are few, else ``CURVE_POINTS`` quantiles of the pooled
    sample; and +∞. ``a``, ``b``: the two samples, sorted (the pooled one is not sorted again,
    ``curve.pooled_quantiles``)."""
    values = np.unique(np.concatenate([a, b])) if a.size + b.size <= 8 * CURVE_POINTS else np.unique(
        C.pooled_quantiles(a, b, CURVE_POINTS))
    if values.size > CURVE_POINTS:
        values = values[np.unique(np.linspace(0, values.size - 1, CURVE_POINTS).astype(int))]
    return np.unique(np.concatenate([values, a[np.isinf(a)], b[np.isinf(b)], [math.inf]]))


@dataclass(frozen=True)
class AttackResult:
    """Everything the CLI, the figure and the exports show, from one run."""

    attack: Attack
    curve: C.ErrorCurve
    boxes: NDArray[np.int64]
    """Indices into the curve where a confidence box is drawn."""
    certificate: C.Certificate
    proven: Guarantee
    tradeoff: theory.Curve
    preview_in: NDArray[np.float64]
    preview_out: NDArray[np.float64]
    draws: int
    per_step: bool
    law_error: float
    """Added to every Clopper–Pearson upper bound and box side (``Sampler.law_error``)."""
    sample_seconds: float
    seconds: float

    # the result protocol (dpviz.results): the certified empirical ε, a lower bound on the true ε
    # at the attack's confidence
    kind = Kind.LOWER
    status = Status.OK
    reason = None
    feasible = True
    source = C.SOURCE

    @property
    def empirical_epsilon(self) -> float:
        return self.certificate.epsilon

    @property
    def value(self) -> float:
        return self.certificate.epsilon

    @property
    def proven_epsilon(self) -> float | None:
        g = self.proven
        return g.upper if g.feasible else None

    @property
    def ratio(self) -> float | None:
        """empirical / proven: how much of the proven ε this attack reaches."""
        p = self.proven_epsilon
        if p is None or not math.isfinite(p) or p <= 0:
            return None
        return self.empirical_epsilon / p

    @property
    def test_name(self) -> str:
        """What the curve's thresholds test: the privacy loss itself (the likelihood-ratio test), or
        the sum of binned loss windows, a post-processing of it (docs/MATH.md §14.5)."""
        return "likelihood-ratio test" if self.law_error == 0 else "test on the binned privacy loss"

    @property
    def exceeds_proven(self) -> bool:
        """The certified ε is above the proven ε. Both can hold only by chance: the certificate is
        a confidence bound, wrong with probability at most 1 − confidence, while the proof holds
        for every outcome (docs/MATH.md §14.3)."""
        p = self.proven_epsilon
        return p is not None and self.empirical_epsilon > p

    @property
    def chance_note(self) -> str | None:
        """What to tell the reader when ``exceeds_proven``: a chance event, and how likely it was."""
        if not self.exceeds_proven:
            return None
        miss = 1 - self.attack.confidence
        return (f"The certified ε is above the proven ε. The proof holds for every outcome; the "
                f"certificate is wrong with probability at most 1 − confidence = {miss:.3g}, and this "
                f"run is such a case. Rerun with another seed, or raise the confidence.")

    def box_bounds(self) -> dict[str, NDArray[np.float64]]:
        """Clopper–Pearson boxes at ``boxes``, each holding the truth with probability ≥ confidence."""
        c = self.curve
        return C.widened(C.box(c.false_alarms[self.boxes], c.misses[self.boxes], c.trials,
                               self.attack.confidence), self.law_error)

    def columns(self) -> dict[str, NDArray[np.float64]]:
        """The curve as CSV columns: threshold, P_FA, P_MD and each threshold's confidence box."""
        c = self.curve
        b = C.widened(C.box(c.false_alarms, c.misses, c.trials, self.attack.confidence), self.law_error)
        return {"threshold": c.thresholds, "P_FA": c.p_fa, "P_MD": c.p_md, "P_FA_lower": b["p_fa_lower"],
                "P_FA_upper": b["p_fa_upper"], "P_MD_lower": b["p_md_lower"], "P_MD_upper": b["p_md_upper"]}

    def to_json(self) -> dict[str, Any]:
        """The CLI's answer (and the page's JSON download)."""
        cert = self.certificate
        g = self.proven
        note = self.chance_note
        return {
            "empirical_epsilon": cert.epsilon,
            "proven_epsilon": finite_or_none(self.proven_epsilon),
            "ratio": finite_or_none(self.ratio),
            "exceeds_proven": note is not None,
            **({"note": note} if note else {}),
            "trials": self.attack.trials,
            "seconds": self.seconds,
            "delta": self.attack.delta,
            "confidence": self.attack.confidence,
            "method": C.METHOD,
            "certificate": cert.to_json(),
            "proven": g.to_json(),
            "tradeoff": self.tradeoff.to_json(),
            "setting": self.attack.describe(),
            "sampling": {"draws_per_hypothesis": self.draws, "seconds": self.sample_seconds,
                         "per_step": self.per_step, "law_error": self.law_error,
                         "statistic": "h·(clipped sum of binned loss windows), docs/MATH.md §14.5"
                         if self.law_error > 0 else "privacy loss sum (or count)"},
        }


def cost(a: Attack) -> Cost:
    """Estimated time and memory of sampling and testing ``a``'s trials, from the counts alone
    (``dpviz.budget`` units): one unit per trial, plus the per-step draws of samplers that draw
    the steps one by one (held at most ``CHUNK_DRAWS`` at a time)."""
    draws = 2.0 * a.trials * step_draws(a)
    trials = cost_of("attack_trial", a.trials, what=f"{a.trials:,} trials per hypothesis")
    if not draws:
        return trials
    return trials + cost_of("attack_step_draw", draws, memory_units=min(draws, float(S.CHUNK_DRAWS)),
                            what=f"{draws:,.0f} per-step draws")


def admit(a: Attack, budget: Budget | None) -> Attack:
    """``a`` when its trials fit ``budget`` (``None``: the command line's); else a ``ParameterError``
    naming ``trials`` with the most that fit, before anything is sampled (issue 22: 10^7 trials
    took 7 s and 600 MB of a page server)."""
    b = budgets.resolve(budget)
    c = cost(a)
    if b.admits(c):
        return a
    per_trial = cost(replace(a, trials=1))
    most = int(min(b.seconds / per_trial.seconds, b.max_bytes / max(per_trial.bytes, 1.0)))
    why = b.reason(c).partition(": ")[2]  # "about 10 s of work, above the 2 s budget … (hint)"
    raise ParameterError("trials", a.trials, f"at most about {max(most, 100):,} within this budget: "
                         f"{a.trials:,} trials per hypothesis take {why}")


@functools.lru_cache(maxsize=THEORY_CACHED)
def theory_of(a: Attack, budget: Budget | None) -> tuple[Guarantee, theory.Curve]:
    """The proven guarantee and the tested pair's trade-off curve (``dpviz.attack.theory``). Neither
    depends on the seed, the trials or the confidence, which ``run_attack`` sets to one value before
    asking, so a new seed or N recomputes only the trials (3-5 ms saved per such change, issue 20)."""
    g = theory.proven(a, budget=budget)
    return g, theory.tradeoff(a, proven_epsilon=g.upper if g.feasible else None, budget=budget)


@dataclass(frozen=True)
class Trials:
    """One setting's draws (``sample``) and the error curve of every threshold on them (read-only
    arrays, shared by the results of every δ and confidence)."""

    s_in: NDArray[np.float64]
    s_out: NDArray[np.float64]
    sampler: S.Sampler
    curve: C.ErrorCurve
    seconds: float
    """The time the sampling took."""


_TRIALS: OrderedDict[Attack, Trials] = OrderedDict()
_TRIALS_LOCK = threading.Lock()


def trials_of(a: Attack, progress: Callable[[float], None] | None = None) -> Trials:
    """``a``'s samples under both hypotheses and their error curve. Neither depends on δ or on the
    confidence, which only the certificate and the proven ε read: the last ``TRIALS_KEPT`` settings'
    are kept (when under ``TRIALS_KEPT_BYTES``), so a change of δ or of the confidence draws nothing
    again (issue 20); the same seed draws the same trials, so the numbers are those of a new draw."""
    key = replace(a, delta=0.0, confidence=0.95)
    with _TRIALS_LOCK:
        kept = _TRIALS.get(key)
        if kept is not None:
            _TRIALS.move_to_end(key)
            return kept
    t0 = time.perf_counter()
    s_in, s_out, sampler = sample(a, progress)
    seconds = time.perf_counter() - t0
    sorted_in, sorted_out = np.sort(s_in), np.sort(s_out)  # once: the thresholds and the counts read both
    t = curve_thresholds(sorted_in, sorted_out)
    fa, md = C.sorted_error_counts(sorted_in, sorted_out, t)
    for array in (s_in, s_out, t, fa, md):
        array.flags.writeable = False
    out = Trials(s_in=s_in, s_out=s_out, sampler=sampler, seconds=seconds,
                 curve=C.ErrorCurve(thresholds=t, false_alarms=fa, misses=md, trials=a.trials))
    if s_in.nbytes + s_out.nbytes <= TRIALS_KEPT_BYTES:
        with _TRIALS_LOCK:
            _TRIALS[key] = out
            while len(_TRIALS) > TRIALS_KEPT:
                _TRIALS.popitem(last=False)
    return out


def run_attack(a: Attack, *, progress: Callable[[float], None] | None = None,
               budget: Budget | None = None) -> AttackResult:
    """Sample (``trials_of``), test, certify, and compare with the theory (module docstring); refused
    (``admit``) when the trials are over ``budget``."""
    admit(a, budget)
    t0 = time.perf_counter()
    trials = trials_of(a, progress)
    s_in, s_out, sampler, curve = trials.s_in, trials.s_out, trials.sampler, trials.curve
    cert = C.certify(s_in, s_out, delta=a.delta, confidence=a.confidence, slack=sampler.law_error)
    g, trade = theory_of(replace(a, seed=0, trials=1, confidence=0.5), budget)
    return AttackResult(attack=a, curve=curve, boxes=C.thin_indices(curve, BOXES), certificate=cert,
                        proven=g, tradeoff=trade, preview_in=s_in[:PREVIEW].copy(),
                        preview_out=s_out[:PREVIEW].copy(), draws=sampler.work(a.trials),
                        per_step=sampler.per_step, law_error=sampler.law_error, sample_seconds=trials.seconds,
                        seconds=time.perf_counter() - t0)
