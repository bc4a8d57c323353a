"""The mechanism protocol: one module per mechanism, one class implementing this, registered once.

A mechanism is a frozen value object built from its parameters (``Param``: key = CLI flag = URL
key, label, default, check, help); the constructor validates every value (``ParameterError``
naming the field). What the accounting routes (``dpviz.mechanisms.routes``) ask of it:

- ``loss_law()``: the exact privacy loss law of its worst pair (Steinke, seed 001, Prop. 7);
- ``rdp(order)``: ρ(λ) of one step, ``math.inf`` when no finite Rényi divergence exists;
- ``step_guarantee(delta)``: a per-step (ε0, δ0) for generic composition (KOV Thm 3.3);
- ``closed_form(k, …)``: the exact answer where a closed form exists (else ``None``);
- ``grid_unit``: a loss every atom is a multiple of (exact grids), or ``None``;
- ``replace_one_law(q)``: the subsampled pair under replace-one neighbours, where implemented;
- ``max_loss``: the largest privacy loss over both directions (finite = pure ε-DP at ε = it);
- ``label``: a short name, e.g. ``"Gaussian μ=1"``.

What the layers above ask of it, declared on the class so that a new mechanism reaches them all:

- ``noise``, ``more_is_noise``: the parameter the planner calibrates (σ, b; ε0 where there is no
  noise scale) and whether a larger value is more noise; ``noise_spread()``: the noise a query
  carries, as the planner shows it;
- ``attackable``: whether the attack lab runs it; ``loss_draw()``: one step's privacy loss drawn
  under P or Q (finite laws by default); ``loss_sum(k)``: a cheaper draw of the k-step sum, where
  the mechanism has one.

Subsampling is the wrapper ``dpviz.mechanisms.subsampling.Subsampled`` around any mechanism.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from dpviz.guarantee import Guarantee, Kind
from dpviz.numerics import bisect_float
from dpviz.params import Param
from dpviz.pld.law import LossLaw
from dpviz.validation import ParameterError

LossDraw = Callable[[np.random.Generator, int, bool], np.ndarray]
"""(rng, n, under_p) → n independent privacy losses under P (``under_p``) or Q."""


def finite_loss_draw(law: LossLaw) -> LossDraw:
    """One step of a finite law: an atom drawn by its P- (or Q-) mass; ±∞ for the masses where the
    other distribution is 0."""
    loss = np.concatenate([law.loss, [math.inf, -math.inf]])
    p = np.concatenate([law.p, [law.p_inf, 0.0]])
    q = np.concatenate([law.q, [0.0, law.q_neg_inf]])
    p, q = p / p.sum(), q / q.sum()

    def draw(rng: np.random.Generator, n: int, under_p: bool) -> np.ndarray:
        return loss[rng.choice(loss.size, size=n, p=p if under_p else q)]

    return draw


@runtime_checkable
class Accountable(Protocol):
    """What the routes ask of a mechanism (a registered ``Mechanism`` or a ``Subsampled`` one)."""

    @property
    def key(self) -> str: ...

    @property
    def law(self) -> LossLaw: ...

    def rdp_curve(self, orders: tuple[int, ...]) -> np.ndarray: ...

    def step_guarantee(self, delta: float) -> Guarantee: ...

    def closed_form(self, k: int, *, delta: float | None = None,
                    epsilon: float | None = None) -> Guarantee | None: ...

    @property
    def grid_unit(self) -> float | None: ...

    @property
    def canonical_pair(self) -> tuple[float, float] | None: ...

    @property
    def max_loss(self) -> float | None: ...

    @property
    def label(self) -> str: ...

    @property
    def sampling_rate(self) -> float | None: ...

    def describe(self) -> dict[str, Any]: ...


class Mechanism:
    """Base of every registered mechanism (module docstring). Subclasses set ``key``, ``title``,
    ``params`` and implement ``loss_law``; the defaults below read what they need from it."""

    key: ClassVar[str]
    title: ClassVar[str]
    params: ClassVar[tuple[Param, ...]]
    finite: ClassVar[bool] = False
    """True when the loss law has finitely many atoms (exact composition applies)."""
    required: ClassVar[tuple[str, ...]] = ()
    """Parameters a user must give (the CLI makes their flags required); the others have defaults."""
    noise: ClassVar[str | None] = None
    """The parameter the planner calibrates (``dpviz.planner.noise``); None: not calibrated."""
    more_is_noise: ClassVar[bool] = True
    """Whether a larger ``noise`` value is more noise (σ, b) or less (ε0)."""
    attackable: ClassVar[bool] = False
    """Whether the attack lab (``dpviz.attack``) runs it: its loss can be drawn (``loss_draw``)."""

    def __init__(self, **values: Any) -> None:
        known = {p.key: p for p in self.params}
        for name in values:
            if name not in known:
                raise ParameterError("parameter", name, "one of the parameters of the "  # a key as typed:
                                     f"{self.key} mechanism: " + ", ".join(known))  # the value, not the field
        self.values: dict[str, Any] = {}
        for p in self.params:
            raw = values.get(p.key, p.default)
            if raw is None:
                raise ParameterError(p.key, None, f"given for the {self.key} mechanism ({p.help})")
            self.values[p.key] = p.check(raw)
        self.validate()

    def validate(self) -> None:
        """Checks across parameters; the default builds the loss law (which checks them)."""
        self.loss_law()

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.values.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.values == self.values

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(self.values.items()))))

    # ------------------------------------------------------------------ the protocol
    def loss_law(self) -> LossLaw:
        raise NotImplementedError

    @cached_property
    def law(self) -> LossLaw:
        """``loss_law()``, built once."""
        return self.loss_law()

    def rdp(self, order: int) -> float:
        """ρ(λ) of one step: max(D_λ(P‖Q), D_λ(Q‖P)) (RDP covers both neighbours; Steinke Thm 34
        assumes it), each exact for atomic laws (ln E_P[e^{(λ−1)L}]/(λ − 1))."""
        from dpviz.rdp.subsampled import law_rdp

        return max(law_rdp(d, order=order) for d in self.law.both_directions())

    def rdp_curve(self, orders: tuple[int, ...]) -> np.ndarray:
        """ρ(λ) at each order: ``rdp``'s numbers, for an atomic law in one array pass per direction
        (``law_rdp_curve``), unless a mechanism states its own ``rdp``."""
        if type(self).rdp is not Mechanism.rdp or self.law.continuous is not None:
            return np.array([self.rdp(o) for o in orders], dtype=float)
        from dpviz.rdp.subsampled import law_rdp_curve

        return np.max([law_rdp_curve(d, orders) for d in self.law.both_directions()], axis=0)

    def step_guarantee(self, delta: float) -> Guarantee:
        """Per-step (ε0, δ0): pure ε0 = ``max_loss`` when finite, else the smallest ε with
        δ(ε) ≤ δ on the exact law (both directions; bisection, rounded up)."""
        m = self.max_loss
        if m is not None:
            return Guarantee(epsilon=m, delta=0.0, kind=Kind.UPPER, source="per-step guarantee")
        return Guarantee(epsilon=law_epsilon(self.law, delta), delta=delta, kind=Kind.UPPER,
                         source="per-step guarantee")

    def closed_form(self, k: int, *, delta: float | None = None,
                    epsilon: float | None = None) -> Guarantee | None:
        """The exact answer for k steps where a closed form exists."""
        return None

    def replace_one_law(self, rate: float) -> LossLaw | None:
        """Loss law of ((1−q)P0 + qP1, (1−q)P0 + qP2) under replace-one neighbours (Steinke §6.2),
        with P0 the output without the record and P1, P2 the two records' (shifted ±Δ for additive
        noise); ``None`` when not implemented (the CLI then refuses ``replace-one``)."""
        return None

    @property
    def grid_unit(self) -> float | None:
        return None

    @property
    def canonical_pair(self) -> tuple[float, float] | None:
        """(ε0, δ0) when the loss law IS the canonical pair (KOV eq. 16): binomial composition."""
        return None

    @cached_property
    def max_loss(self) -> float | None:
        """Largest privacy loss over both directions; ``None`` when unbounded (not pure DP)."""
        return law_max_loss(self.law)

    @property
    def label(self) -> str:
        return self.law.name

    @property
    def sampling_rate(self) -> float | None:
        return None

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description: the key and the parameter values."""
        return {"mechanism": self.key, **self.values}

    def noise_spread(self) -> tuple[str, float] | None:
        """The noise one query carries, as (what, value), e.g. ("s.d.", σ); None when not additive."""
        return None

    def loss_draw(self) -> LossDraw:
        """One step's privacy loss, drawn (the attack lab): finite laws by their atoms."""
        law = self.law
        if law.continuous is not None:
            raise NotImplementedError(f"{self.key}: no sampler of a continuous loss law")
        return finite_loss_draw(law)

    def loss_sum(self, k: int) -> tuple[LossDraw, float] | None:
        """(draw of the k-step loss sum, the expected fraction of steps drawn one by one) where the
        mechanism has a cheaper route than k draws; None: draw the steps."""
        return None


def law_max_loss(law: LossLaw) -> float | None:
    """Largest |L| with positive mass over (P, Q) and (Q, P); ``None`` when some is infinite."""
    if law.p_inf > 0 or law.q_neg_inf > 0:
        return None
    vals: list[float] = []
    live = (law.p > 0) | (law.q > 0)
    if np.any(live):
        vals += [float(np.max(law.loss[live])), float(-np.min(law.loss[live]))]
    c = law.continuous
    if c is not None:
        if not (math.isfinite(c.lo) and math.isfinite(c.hi)):
            return None
        vals += [c.hi, -c.lo]
    return max([0.0, *vals])


def law_epsilon(law: LossLaw, delta: float) -> float:
    """Smallest ε ≥ 0 (up to 1e-12 relative, rounded up) with δ(ε) ≤ δ in both directions of
    ``law`` (Steinke Prop. 7); ``math.inf`` when δ is below the mass at +∞."""
    dirs = law.both_directions()

    def d(e: float) -> float:
        return max(float(x.delta(e)[0]) for x in dirs)

    if max(x.p_inf for x in dirs) > delta:
        return math.inf
    if d(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while d(hi) > delta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e18:
            return math.inf
    return bisect_float(lambda e: d(e) > delta, lo, hi, rtol=1e-12, scale_floor=0.0)[1]


def param_values(mechanism_params: tuple[Param, ...], source: Mapping[str, Any]) -> dict[str, Any]:
    """The raw values of ``mechanism_params`` found in ``source`` (absent ones left to defaults)."""
    return {p.key: source[p.key] for p in mechanism_params if source.get(p.key) is not None}
