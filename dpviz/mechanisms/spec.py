"""A named mechanism with its parameters, and every accounting route for it, as ``Interval`` rows.

A thin adapter over the mechanism protocol (``dpviz.mechanisms.base``, the registry) and the
routes (``dpviz.mechanisms.routes``, which return ``Guarantee``), kept for existing callers
(benchmarks, tests) until they move to the routes; new code uses the routes directly.
``report`` computes ε at a target δ by each route: ``pld`` (certified grid, ``choose_h``),
``analytic`` (Gaussian, Steinke Cor. 8/10), ``rdp`` (Steinke Thm 34 + conversion),
``buckets`` (Meiser-Mohammadi) and ``generic`` (KOV Thm 3.3 for the per-step (ε0, δ0)).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from dpviz.budget import Budget, OverBudget
from dpviz.composition import Levels, homogeneous
from dpviz.guarantee import Guarantee, Status
from dpviz.mechanisms import routes
from dpviz.mechanisms.base import Mechanism
from dpviz.mechanisms.registry import mechanism_class
from dpviz.mechanisms.subsampling import Subsampled, wrap
from dpviz.pld.accountant import DEFAULT_H, Interval, compose_within_limits, plan
from dpviz.pld.law import LossLaw
from dpviz.validation import (
    EPSILON_MAX,
    ParameterError,
    check_count,
    check_delta,
    check_positive,
    check_probability,
)

KINDS = ("gaussian", "laplace", "geometric", "randomized-response", "canonical")
"""The kinds this adapter accepts (the registry, ``dpviz.mechanisms.registry``, has more)."""

DEFAULT_BUDGET = 1 << 20
"""Composed-grid size (bins) the automatic grid width aims for: ≈1 s per composition."""

BUCKETS_N = routes.BUCKETS_N

_PARAMS = {"gaussian": ("sigma", "sensitivity"), "laplace": ("scale", "sensitivity"),
           "geometric": ("eps0", "sensitivity"), "randomized-response": ("eps0", "categories"),
           "canonical": ("eps0", "delta0")}


@dataclass(frozen=True)
class MechanismSpec:
    """One mechanism; unused parameters are ignored. ``sampling_rate`` None = no subsampling.
    A thin adapter over the registry (``mechanism()``), kept for existing callers."""

    kind: str
    sigma: float | None = None
    scale: float | None = None
    eps0: float | None = None
    delta0: float = 0.0
    sensitivity: float = 1.0
    categories: int = 2
    sampling_rate: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ParameterError("mechanism", self.kind, "one of " + ", ".join(KINDS))
        if self.sampling_rate is not None:
            object.__setattr__(self, "sampling_rate",
                               check_probability(self.sampling_rate, field="sampling_rate"))
        self.mechanism()  # validates the parameters

    def base(self) -> Mechanism:
        """The registered mechanism without subsampling."""
        return mechanism_class(self.kind)(**{key: getattr(self, key) for key in _PARAMS[self.kind]})

    def mechanism(self) -> Mechanism | Subsampled:
        """The registered mechanism, Poisson-subsampled when ``sampling_rate`` is set."""
        return wrap(self.base(), rate=self.sampling_rate)

    def base_law(self) -> LossLaw:
        return self.base().law

    def law(self) -> LossLaw:
        """The law to compose: base law, or the remove direction of its subsampling."""
        return self.mechanism().law

    @property
    def grid_unit(self) -> float | None:
        """A loss every atom is a multiple of (so h = unit/m discretises exactly), if any."""
        return self.mechanism().grid_unit

    def step_guarantee(self, *, delta_step: float) -> Guarantee:
        """Per-step (ε0, δ0) handed to generic composition (Thm 29 applied when subsampled)."""
        return self.mechanism().step_guarantee(delta_step)

    def label(self) -> str:
        return self.law().name


# ---------------------------------------------------------------------- grid width
def choose_h(spec: MechanismSpec, *, k: int, budget: int = DEFAULT_BUDGET, h: float | None = None) -> float:
    """Grid width: ``h`` if given, else DEFAULT_H (finer for narrow laws, a divisor of the atom
    spacing for atomic laws so their atoms stay exact), doubled until the composed grid fits
    ``budget`` bins."""
    parts = [(spec.law(), k)]
    if h is not None:
        h = check_positive(h, field="h")
        plan(parts, h=h)
        return h
    unit = spec.grid_unit
    if unit is None:  # at least ~2000 grid points across a narrow loss law (large σ)
        lo, hi = parts[0][0].support(1e-15)
        cand = min(DEFAULT_H, max(hi - lo, 1e-12) / 2000.0)
    else:
        cand = unit / math.ceil(unit / DEFAULT_H)
    for _ in range(40):
        try:
            if plan(parts, h=cand) <= budget:
                return cand
        except ParameterError:
            pass
        if unit is None:
            cand *= 2.0
        else:
            m = max(1, math.floor(unit / cand / 2.0))
            cand = unit / m
            if m == 1:
                return cand
    raise _grid_error(spec, k=k, why="no grid width up to the law's own range fits")


_NOISE_FIELD = {"gaussian": "sigma", "laplace": "scale"}


def _grid_error(spec: MechanismSpec, *, k: int, why: str) -> ParameterError:
    """The PLD grid cannot hold the composition at an automatic h: name k (or, for k = 1, the
    noise parameter), never the internal grid width the user did not give."""
    if k > 1:
        return ParameterError("k", k, f"small enough for the PLD grid of this mechanism ({why})")
    field = _NOISE_FIELD.get(spec.kind, "eps0")
    return ParameterError(field, getattr(spec, field), f"within the PLD grid's range ({why})")


# ---------------------------------------------------------------------- routes
def pld_interval(spec: MechanismSpec, *, k: int, delta: float, h: float | None = None,
                 budget: int = DEFAULT_BUDGET, cost_budget: Budget | None = None) -> Interval:
    """``budget``: composed-grid bins aimed for; ``cost_budget``: time and memory (``dpviz.budget``),
    beyond which the grid coarsens and then ``OverBudget`` is raised."""
    t0 = time.perf_counter()
    try:
        hh = choose_h(spec, k=k, h=h, budget=budget)
        c = compose_within_limits([(spec.law(), k)], h=hh, budget=cost_budget)
    except ParameterError as exc:
        if exc.field != "h":
            raise
        if h is not None:  # the user's h, not the coarsened one the message was raised with
            raise ParameterError("h", h, exc.allowed) from None
        raise _grid_error(spec, k=k, why=exc.allowed) from None
    lo, up = c.epsilon(delta)
    return Interval(lower=math.inf if lo is None else lo, upper=up, method="pld",
                    seconds=time.perf_counter() - t0, detail=f"h={c.h:.3g}")


def _interval(g: Guarantee, method: str, *, exact: float | None = None) -> Interval:
    ok = g.status is Status.OK
    return Interval(lower=g.lower if ok else None, upper=g.upper if ok else None, method=method,
                    seconds=g.seconds or 0.0, exact=exact, detail=g.detail if ok else (g.reason or ""))


def analytic_interval(spec: MechanismSpec, *, k: int, delta: float) -> Interval | None:
    """Gaussian without subsampling: Steinke Cor. 8 with μ√k (Cor. 10)."""
    g = routes.analytic([(spec.mechanism(), k)], delta=delta)
    if g is None:
        return None
    return Interval(lower=g.lower, upper=g.upper, method="analytic", seconds=g.seconds or 0.0, exact=g.upper,
                    detail=g.source)


def rdp_interval(spec: MechanismSpec, *, k: int, delta: float) -> Interval | None:
    """Steinke Thm 34 (subsampled) or the base RDP curve, composed k times and converted."""
    g = routes.rdp([(spec.mechanism(), k)], delta=delta)
    return None if g.status is not Status.OK else _interval(g, "rdp")


def buckets_interval(spec: MechanismSpec, *, k: int, delta: float, n: int = BUCKETS_N) -> Interval:
    """Privacy buckets with 2n + 1 buckets (``routes.buckets``)."""
    g = routes.buckets([(spec.mechanism(), k)], delta=delta, n=n)
    detail = g.detail if g.status is Status.OK else "; ".join(x for x in (g.detail, g.reason) if x)
    return Interval(lower=g.lower, upper=g.upper if g.status is Status.OK else None, method="buckets",
                    seconds=g.seconds or 0.0, detail=detail)


def generic_levels(spec: MechanismSpec, *, k: int, delta: float) -> Levels | None:
    """The per-step (ε0, δ0) guarantee, k times, for the generic optimum; ``None`` when ε0 is
    beyond the composition core's range (capping it would understate the bound)."""
    step = spec.step_guarantee(delta_step=delta / (2.0 * k))
    if step.epsilon is None or step.delta is None or step.epsilon > EPSILON_MAX:
        return None
    return homogeneous(k=k, eps0=step.epsilon, delta0=step.delta)


def generic_interval(spec: MechanismSpec, *, k: int, delta: float) -> Interval:
    """KOV Thm 3.3 for the per-step (ε0, δ0) (``routes.generic``); the interval is the optimum over
    all mechanisms with that guarantee (lower = upper, as before)."""
    g = routes.generic([(spec.mechanism(), k)], delta=delta)
    eps = g.epsilon if g.status is Status.OK else None
    return Interval(lower=eps, upper=eps, method="generic", seconds=g.seconds or 0.0,
                    detail=g.detail.replace("per-step ", "KOV Thm 3.3 for per-step ") if eps is not None
                    else (g.reason or ""))


def report(spec: MechanismSpec, *, k: int, delta: float, h: float | None = None,
           with_buckets: bool = True, cost_budget: Budget | None = None) -> dict[str, Interval]:
    """ε at δ by every applicable route (module docstring); a PLD over ``cost_budget`` is a row
    without values whose detail says why."""
    k = check_count(k, field="k")
    delta = check_delta(delta, field="delta", positive=True)
    try:
        pld = pld_interval(spec, k=k, delta=delta, h=h, cost_budget=cost_budget)
    except OverBudget as exc:
        pld = Interval(lower=None, upper=None, method="pld", detail=f"PLD {exc.reason}")
    out: dict[str, Interval] = {"pld": pld}
    for key, fn in (("analytic", analytic_interval), ("rdp", rdp_interval)):
        iv = fn(spec, k=k, delta=delta)
        if iv is not None:
            out[key] = iv
    if with_buckets:
        out["buckets"] = buckets_interval(spec, k=k, delta=delta)
    out["generic"] = generic_interval(spec, k=k, delta=delta)
    return out


__all__ = ["KINDS", "MechanismSpec", "choose_h", "report"]
