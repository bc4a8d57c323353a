"""What an attack is: the mechanism, k, the hypotheses, the trials, the seed, δ and the confidence.

The parameters are ``Param`` specs (URL key = CLI flag); ``make_attack`` checks them all, so the CLI
and the page refuse the same inputs with the same one-line message naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from dpviz.attack.binned import law_of
from dpviz.mechanisms.registry import MECHANISMS, make, mechanism_class
from dpviz.params import SAMPLING_RATE, Param, count_param, subsampling
from dpviz.validation import ParameterError, check_count, check_delta, check_probability

KINDS = tuple(key for key, cls in MECHANISMS.items() if cls.attackable)
"""The mechanisms the attack lab simulates, those that declare ``attackable`` (any of them
Poisson-subsampled with ``sampling_rate``)."""

PRIORS = ("all", "uniform")
"""Which databases hold the target under H0 (HBW's generalized experiment, seed 000): ``all`` —
every one of the k (classic DP, against none); ``uniform`` — a uniformly drawn non-empty set of
them, against none (HBW §V-B; the canonical pair with δ0 = 0 only)."""

MAX_TRIALS = 10_000_000
"""Most trials per hypothesis."""

MAX_STEP_DRAWS = 50_000_000
"""Most per-step draws per hypothesis (trials × the steps drawn one by one: k for subsampled
mechanisms, Laplace's middle steps): a few seconds of sampling (benchmarks/results/attack.md)."""

MAX_K = 1_000_000
"""Most steps composed."""


def _check_confidence(value: object) -> float:
    allowed = "a number in [0.5, 0.999999]"
    try:
        c = check_probability(value, field="confidence")
    except ParameterError:
        raise ParameterError("confidence", value, allowed) from None
    if not 0.5 <= c <= 0.999999:
        raise ParameterError("confidence", value, allowed)
    return c


def _check_prior(value: object) -> str:
    text = str(value).strip()
    if text not in PRIORS:
        raise ParameterError("prior", value, "one of " + ", ".join(PRIORS))
    return text


K = count_param("k (steps composed)", 10, maximum=MAX_K, what="composed steps")
TRIALS = Param("trials", "trials per hypothesis N", 20_000,
               partial(check_count, field="trials", minimum=100, maximum=MAX_TRIALS),
               f"Experiments run with the target in and as many with it out, 100 to {MAX_TRIALS:,} "
               f"(at most {MAX_STEP_DRAWS:,} step draws, N·k, when each step is drawn).")
SEED = Param("seed", "seed", 1, partial(check_count, field="seed", minimum=0, maximum=2**63 - 1),
             "Seed of the random generator: the same seed gives the same trials.")
DELTA = Param("delta", "target δ", 1e-5, partial(check_delta, field="delta"),
              "The δ at which the attack's ε and the proven ε are compared, in [0, 1).")
CONFIDENCE = Param("confidence", "confidence", 0.95, _check_confidence,
                   "Confidence of the empirical ε lower bound and of the boxes, in [0.5, 0.999999].")
PRIOR = Param("prior", "databases holding the target", "all", _check_prior,
              "all: the target is in every database (classic DP); uniform: in a uniformly drawn "
              "non-empty set of the k databases (HBW §V-B; canonical pair with δ0 = 0).")
def _check_rate(value: object) -> float | None:
    """A Poisson sampling rate in (0, 1] (``SAMPLING_RATE``); none given: no subsampling."""
    if value is None or str(value).strip() == "":
        return None
    return SAMPLING_RATE.check(value)


RATE = replace(SAMPLING_RATE, default=None, check=_check_rate,
               help=SAMPLING_RATE.help + " Absent: no subsampling.")
PARAMS = (K, TRIALS, SEED, DELTA, CONFIDENCE, PRIOR, RATE)
"""The attack's own parameters (the mechanism's come from its registry entry)."""


def step_draws(a: Attack) -> float:
    """Expected per-step draws of one trial: 0 for the one-draw samplers (counts, the Gaussian sum),
    k for subsampled mechanisms, the middle steps k(1 − e^{−ε0})/2 for Laplace (``sampling``), and 0
    for those too where the binned post-processing is sampled instead (docs/MATH.md §14.5)."""
    mech = a.accountable()
    if a.prior != "uniform" and law_of(mech, sampling_rate=a.sampling_rate) is not None:
        return 0.0
    if a.sampling_rate is not None:
        return float(a.k)
    fast = mech.loss_sum(a.k)
    return a.k * fast[1] if fast is not None else 0.0


def _rate(value: Any) -> float | None:
    """The sampling rate; q = 1 samples everyone: no subsampling."""
    return subsampling(RATE.check(value))


@dataclass(frozen=True)
class Attack:
    """A checked attack setting (``make_attack``); hashable, so results can be cached by it."""

    mechanism: str
    params: tuple[tuple[str, Any], ...]
    k: int
    trials: int
    seed: int
    delta: float
    confidence: float = 0.95
    sampling_rate: float | None = None
    prior: str = "all"

    def accountable(self) -> Any:
        """The registered mechanism (subsampled when a rate is given)."""
        return make(self.mechanism, sampling_rate=self.sampling_rate, **dict(self.params))

    def describe(self) -> dict[str, Any]:
        return {"mechanism": self.mechanism, **dict(self.params), "sampling_rate": self.sampling_rate,
                "prior": self.prior, "k": self.k, "trials": self.trials, "seed": self.seed,
                "delta": self.delta, "confidence": self.confidence}


def make_attack(mechanism: str, *, k: Any = K.default, trials: Any = TRIALS.default, seed: Any = SEED.default,
                delta: Any = DELTA.default, confidence: Any = CONFIDENCE.default, sampling_rate: Any = None,
                prior: Any = PRIOR.default, **params: Any) -> Attack:
    """Every value checked (``ParameterError`` naming the field), the work bounded."""
    if mechanism not in KINDS:
        raise ParameterError("mechanism", mechanism, "one of " + ", ".join(KINDS))
    cls = mechanism_class(mechanism)
    values = {p.key: p.check(params.get(p.key, p.default)) for p in cls.params}
    unknown = set(params) - set(values)
    if unknown:
        name = sorted(unknown)[0]
        raise ParameterError("parameter", name,  # a key as typed: the value, never the field
                             f"one of the parameters of {mechanism}: " + ", ".join(values))
    a = Attack(mechanism=mechanism, params=tuple(values.items()), k=K.check(k), trials=TRIALS.check(trials),
               seed=SEED.check(seed), delta=DELTA.check(delta), confidence=CONFIDENCE.check(confidence),
               sampling_rate=_rate(sampling_rate), prior=PRIOR.check(prior))
    mech = a.accountable()  # the mechanism's own cross-checks
    if a.prior == "uniform":
        if mechanism != "canonical" or values.get("delta0", 0.0) != 0.0 or a.sampling_rate is not None:
            raise ParameterError("prior", prior, "all unless the mechanism is the canonical pair with "
                                 "delta0 = 0 and no sampling rate (uniform prior: HBW §V-B)")
        if a.k > 100_000:
            raise ParameterError("k", k, "at most 100,000 with the uniform prior")
    per_trial = step_draws(a)
    if per_trial and a.trials * per_trial > MAX_STEP_DRAWS:
        raise ParameterError("trials", trials, f"at most {int(MAX_STEP_DRAWS // per_trial):,} here: "
                             f"{MAX_STEP_DRAWS:,} step draws at most, {per_trial:,.6g} per trial for "
                             f"{mech.label}, k = {a.k:,}")
    return a
