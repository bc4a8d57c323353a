"""A named mechanism with its parameters, and every accounting route for it.

``MechanismSpec`` validates its parameters (``ParameterError`` naming the field) and gives
the exact loss law (with Poisson subsampling when ``sampling_rate`` is set). ``report``
computes ε at a target δ by each route as an ``Interval``:

- ``pld``: certified [lower, upper] from the grid PLD (``dpviz.pld``);
- ``analytic``: Gaussian without subsampling, Steinke Cor. 8/10 (bisection bracket);
- ``rdp``: Steinke Thm 34 + RDP conversion (upper bound only);
- ``buckets``: privacy buckets with error correction (Meiser-Mohammadi), [lower, upper];
- ``generic``: the exact optimum over *all* mechanisms with the same per-step (ε0, δ0)
  (KOV Thm 3.3), i.e. what composition theorems can say without knowing the mechanism.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from dpviz.buckets import MAX_LOG_F, Buckets, epsilon_from_delta_curve
from dpviz.budget import Budget, OverBudget
from dpviz.composition import Levels, homogeneous, optimal
from dpviz.guarantee import Guarantee, Kind
from dpviz.mechanisms import canonical, gaussian, geometric, laplace, randomized_response
from dpviz.mechanisms.subsampling import amplify, subsample_remove
from dpviz.pld.accountant import DEFAULT_H, Interval, compose_within_limits, plan
from dpviz.pld.law import LossLaw
from dpviz.rdp.conversion import epsilon_from_rdp
from dpviz.rdp.subsampled import DEFAULT_ORDERS, base_rdp, rdp_curve
from dpviz.validation import (
    EPSILON_MAX,
    ParameterError,
    check_count,
    check_delta,
    check_positive,
    check_probability,
)

KINDS = ("gaussian", "laplace", "geometric", "randomized-response", "canonical")

DEFAULT_BUDGET = 1 << 20
"""Composed-grid size (bins) the automatic grid width aims for: ≈1 s per composition."""

BUCKETS_N = 50_000
"""n for the buckets comparison: 2n + 1 = 100,001 buckets."""


@dataclass(frozen=True)
class MechanismSpec:
    """One mechanism; unused parameters are ignored. ``sampling_rate`` None = no subsampling."""

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
        self.base_law()  # validates the parameters

    # ------------------------------------------------------------------ laws
    def base_law(self) -> LossLaw:
        if self.kind == "gaussian":
            return gaussian.loss_law(sigma=_need(self.sigma, "sigma"), sensitivity=self.sensitivity)
        if self.kind == "laplace":
            return laplace.loss_law(scale=_need(self.scale, "scale"), sensitivity=self.sensitivity)
        if self.kind == "geometric":
            return geometric.loss_law(eps0=_need(self.eps0, "eps0"), sensitivity=self.sensitivity)
        if self.kind == "randomized-response":
            return randomized_response.loss_law(eps0=_need(self.eps0, "eps0"), categories=self.categories)
        return canonical.loss_law(eps0=_need(self.eps0, "eps0"), delta0=self.delta0)

    def law(self) -> LossLaw:
        """The law to compose: base law, or the remove direction of its subsampling."""
        base = self.base_law()
        if self.sampling_rate is None or self.sampling_rate == 1.0:
            return base
        return subsample_remove(base, rate=self.sampling_rate)

    @property
    def grid_unit(self) -> float | None:
        """A loss every atom is a multiple of (so h = unit/m discretises exactly), if any."""
        if self.sampling_rate not in (None, 1.0) or self.kind == "gaussian":
            return None
        if self.kind == "laplace":
            return laplace.epsilon0(scale=_need(self.scale, "scale"), sensitivity=self.sensitivity)
        return _need(self.eps0, "eps0")

    def step_guarantee(self, *, delta_step: float) -> Guarantee:
        """Per-step (ε0, δ0) handed to generic composition (Thm 29 applied when subsampled)."""
        if self.kind == "gaussian":
            _, eps = gaussian.epsilon_bracket(delta=delta_step, sigma=_need(self.sigma, "sigma"),
                                              sensitivity=self.sensitivity)
            e0, d0 = eps, delta_step
        elif self.kind == "laplace":
            e0, d0 = laplace.epsilon0(scale=_need(self.scale, "scale"), sensitivity=self.sensitivity), 0.0
        elif self.kind == "geometric":
            e0, d0 = _need(self.eps0, "eps0") * int(self.sensitivity), 0.0
        else:
            e0, d0 = _need(self.eps0, "eps0"), self.delta0
        if self.sampling_rate is not None:
            return amplify(epsilon=e0, delta=d0, rate=self.sampling_rate)
        return Guarantee(epsilon=e0, delta=d0, kind=Kind.UPPER, source="per-step guarantee")

    def label(self) -> str:
        return self.law().name


def _need(value: float | None, field: str) -> float:
    if value is None:
        raise ParameterError(field, None, "given for this mechanism")
    return check_positive(value, field=field)


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


def analytic_interval(spec: MechanismSpec, *, k: int, delta: float) -> Interval | None:
    """Gaussian without subsampling: Steinke Cor. 8 with μ√k (Cor. 10)."""
    if spec.kind != "gaussian" or spec.sampling_rate not in (None, 1.0):
        return None
    t0 = time.perf_counter()
    lo, hi = gaussian.epsilon_bracket(delta=delta, sigma=_need(spec.sigma, "sigma"),
                                      sensitivity=spec.sensitivity, k=k)
    return Interval(lower=lo, upper=hi, method="analytic", seconds=time.perf_counter() - t0,
                    exact=hi, detail=gaussian.SOURCE)


def rdp_interval(spec: MechanismSpec, *, k: int, delta: float) -> Interval | None:
    """Steinke Thm 34 (subsampled) or the base RDP curve, composed k times and converted."""
    if spec.kind == "canonical" and spec.delta0 > 0:
        return None  # no finite Rényi divergence
    t0 = time.perf_counter()
    top = max(DEFAULT_ORDERS)
    if spec.kind == "gaussian":
        m = gaussian.mu(sigma=_need(spec.sigma, "sigma"), sensitivity=spec.sensitivity)
        base = [base_rdp("gaussian", order=j, mu=m) for j in range(2, top + 1)]
    elif spec.kind == "laplace":
        e0 = laplace.epsilon0(scale=_need(spec.scale, "scale"), sensitivity=spec.sensitivity)
        base = [base_rdp("laplace", order=j, eps0=e0) for j in range(2, top + 1)]
    else:
        law = spec.base_law()
        base = [base_rdp("atoms", order=j, law=law) for j in range(2, top + 1)]
    curve = rdp_curve(base, rate=spec.sampling_rate, k=k)
    eps, order = epsilon_from_rdp(DEFAULT_ORDERS, curve, delta=delta)
    return Interval(lower=None, upper=eps, method="rdp", seconds=time.perf_counter() - t0,
                    detail=f"Steinke Thm 34, order {order}")


def buckets_interval(spec: MechanismSpec, *, k: int, delta: float, n: int = BUCKETS_N) -> Interval:
    """Privacy buckets with 2n + 1 buckets; a chain of products for k ≤ 64, squaring beyond."""
    t0 = time.perf_counter()
    law = spec.law()
    k = check_count(k, field="k")
    squaring = k > 64
    lo, hi = law.support(1e-15)
    reach = max(abs(lo), abs(hi)) * (1 if squaring else k)
    unit = spec.grid_unit
    log_f = max(reach / n, 1e-12)
    if unit is not None:
        log_f = unit / max(1, math.floor(unit / log_f))
    detail = f"{2 * n + 1:,} buckets, ln f={log_f:.3g}, {'squaring' if squaring else 'chain'}"
    final = log_f * 2 ** math.ceil(math.log2(k)) if squaring else log_f
    if final > MAX_LOG_F:  # the tilted masses scale with f: past e^300 their products overflow
        return Interval(lower=None, upper=None, method="buckets", seconds=time.perf_counter() - t0,
                        detail=detail + f"; not computed: the losses reach {reach:.3g}, so the bucket "
                                        f"factor would reach ln f ≈ {final:.3g} > {MAX_LOG_F:g}")
    upper = lower = 0.0
    for d in law.both_directions():
        b = Buckets.from_law(d, log_f=log_f, n=n).self_compose(k, squaring=squaring)
        if b.swamped:
            return Interval(lower=None, upper=None, method="buckets", seconds=time.perf_counter() - t0,
                            detail=detail + f"; no bounds: the FFT round-off bound of the tilted masses "
                                            f"exceeds 1 (or ln f would exceed {MAX_LOG_F:g}; final ln f "
                                            f"≈ {final:.3g})")
        u = epsilon_from_delta_curve(b.delta_upper, delta=delta)
        lw = epsilon_from_delta_curve(b.delta_lower, delta=delta, lower=True)
        upper = math.inf if u is None else max(upper, u)
        lower = math.inf if lw is None else max(lower, lw)
    if not math.isfinite(upper):
        # each squaring node coarsens f → f² (Meiser-Mohammadi §5): say why no upper bound is shown
        detail += (f"; no certified upper ε at this δ: the sound δ bound stays above δ "
                   f"(final ln f ≈ {final:.3g})")
    return Interval(lower=lower, upper=upper if math.isfinite(upper) else None, method="buckets",
                    seconds=time.perf_counter() - t0, detail=detail)


def generic_levels(spec: MechanismSpec, *, k: int, delta: float) -> Levels | None:
    """The per-step (ε0, δ0) guarantee, k times, for the generic optimum; ``None`` when ε0 is
    beyond the composition core's range (capping it would understate the bound)."""
    step = spec.step_guarantee(delta_step=delta / (2.0 * k))
    if step.epsilon > EPSILON_MAX:
        return None
    return homogeneous(k=k, eps0=step.epsilon, delta0=step.delta)


def generic_interval(spec: MechanismSpec, *, k: int, delta: float) -> Interval:
    """KOV Thm 3.3 for the per-step (ε0, δ0); for the Gaussian δ0 = δ/(2k) is spent per step."""
    t0 = time.perf_counter()
    delta_step = delta / (2.0 * k)
    if spec.kind == "gaussian" and delta_step == 0:
        return Interval(lower=None, upper=None, method="generic", seconds=time.perf_counter() - t0,
                        detail=f"per-step δ0 = δ/(2k) underflows to 0 at δ = {delta:.3g}, k = {k}: "
                               "not computed")
    step = spec.step_guarantee(delta_step=delta_step)
    levels = generic_levels(spec, k=k, delta=delta)
    if levels is None:
        return Interval(lower=None, upper=None, method="generic", seconds=time.perf_counter() - t0,
                        detail=f"per-step ε0 = {step.epsilon:.4g} > {EPSILON_MAX:g}: not computed")
    g = optimal.epsilon_for_delta(levels, delta=delta)
    eps = g.epsilon if g.feasible else None
    return Interval(lower=eps, upper=eps, method="generic", seconds=time.perf_counter() - t0,
                    detail=f"KOV Thm 3.3 for per-step ({step.epsilon:.4g}, {step.delta:.3g})")


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


def delta_band(spec: MechanismSpec, *, k: int, epsilons: np.ndarray, h: float | None = None,
               budget: int = DEFAULT_BUDGET) -> tuple[np.ndarray, np.ndarray]:
    """δ(ε) lower and upper bounds on a grid of ε (PLD route)."""
    hh = choose_h(spec, k=k, h=h, budget=budget)
    c = compose_within_limits([(spec.law(), k)], h=hh)
    pairs = np.array([c.delta(float(e)) for e in epsilons])
    return pairs[:, 0], pairs[:, 1]


__all__ = ["KINDS", "MechanismSpec", "choose_h", "delta_band", "report"]
