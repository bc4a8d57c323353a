"""What the theory says about the attack: the proven ε at δ and the exact trade-off curve of the
pair the attack tests (docs/MATH.md §14.4). Reuses the core: the mechanism routes
(``dpviz.mechanisms.routes``), composed atoms (``dpviz.regions.pairs``), the exact prior pairs
(``dpviz.gce.exact``) and the certified PLD (``dpviz.pld.accountant``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri
from scipy.stats import binom

from dpviz import budget as budgets
from dpviz.attack.setting import Attack
from dpviz.budget import Budget, OverBudget
from dpviz.gce import exact as gce_exact
from dpviz.gce import hypotheses
from dpviz.guarantee import Guarantee, Kind, Status
from dpviz.mechanisms import routes as R
from dpviz.pld import accountant
from dpviz.regions.boundary import Boundary, intersection_boundary
from dpviz.regions.pairs import atoms_boundary

GAUSSIAN_POINTS = 400
"""Vertices of the Gaussian trade-off curve (P_FA log-spaced towards 0)."""


@dataclass(frozen=True)
class Curve:
    """The lower boundary of the tested pair's region: ``exact`` (the trade-off curve itself) or
    ``outer`` (a certified region containing it: the curve is on or above this boundary);
    ``boundary`` None with ``reason`` when not computed."""

    boundary: Boundary | None
    kind: str
    source: str
    reason: str = ""

    @property
    def status(self) -> Status:
        """OK with a boundary, else not computed (``reason`` says why)."""
        return Status.OK if self.boundary is not None else Status.NOT_COMPUTED

    def to_json(self) -> dict[str, Any]:
        """What the boundary is and where it comes from (the boundary itself is the figure's)."""
        return {"kind": self.kind, "source": self.source, **({"reason": self.reason} if self.reason else {})}


def _prior_pair(a: Attack, budget: Budget | None) -> gce_exact.ExactPair:
    eps0 = dict(a.params)["eps0"]
    return gce_exact.exact_pair(hypotheses.point_zero(k=a.k), hypotheses.uniform_nonzero(k=a.k), eps0=eps0,
                                delta0=0.0, budget=budget)


def proven(a: Attack, *, budget: Budget | None = None) -> Guarantee:
    """The best proven ε at δ for the attacked composition (its upper bound is what the attack is
    compared with): the mechanism routes' best (exact, analytic, PLD, RDP, generic), or the exact
    worst case of the prior (docs/MATH.md §5.5)."""
    if a.prior == "uniform":
        try:
            e = _prior_pair(a, budget).epsilon(a.delta)
        except OverBudget as exc:
            return Guarantee.not_computed(source=gce_exact.SOURCE, reason=str(exc), delta=a.delta)
        if e is None:
            return Guarantee.impossible(source=gce_exact.SOURCE, delta=a.delta, reason="δ below the mass at "
                                        "infinite loss")
        return Guarantee(epsilon=e, delta=a.delta, kind=Kind.EXACT, source=gce_exact.SOURCE)
    parts = [(a.accountable(), a.k)]
    return R.best(R.routes(parts, delta=a.delta, budget=budget))[1]


def gaussian_tradeoff(mu: float) -> Boundary:
    """β(α) = Φ(Φ⁻¹(1 − α) − μ) for N(μ, 1) against N(0, 1): the Neyman–Pearson test rejecting
    P below a threshold on the loss (Steinke §3.2, Lemma 4, with the loss law of Prop. 3)."""
    alpha = np.unique(np.concatenate([[0.0], np.logspace(-16, 0, GAUSSIAN_POINTS), np.linspace(0, 1, 101)]))
    with np.errstate(divide="ignore"):
        beta = ndtr(ndtri(1.0 - alpha) - mu)
    beta[0] = 1.0
    beta[-1] = 0.0
    return Boundary(p_fa=alpha, p_md=np.minimum.accumulate(beta))


def tradeoff(a: Attack, *, proven_epsilon: float | None = None, budget: Budget | None = None) -> Curve:
    """The trade-off curve of H0 (target in) against H1 (out) for the attacked composition: exact
    for finite laws (composed atoms), the Gaussian (closed form) and the uniform prior (exact pair);
    otherwise the certified outer region ∩_ε R(ε, δ_up(ε)) of the PLD's upper δ curve (KOV §2)."""
    budget = budget or budgets.PAGE
    if a.prior == "uniform":
        try:
            pair = _prior_pair(a, budget)
        except OverBudget as exc:
            return Curve(None, "none", gce_exact.SOURCE, reason=str(exc))
        return Curve(atoms_boundary(pair.forward), "exact", gce_exact.SOURCE)
    mech = a.accountable()
    if mech.key == "gaussian" and a.sampling_rate is None:
        return Curve(gaussian_tradeoff(mech.mu * math.sqrt(a.k)), "exact", "Steinke Prop. 3, Cor. 10")
    parts = [(mech, a.k)]
    atoms = R.exact_atoms(parts) if mech.law.continuous is None else "continuous"
    if not isinstance(atoms, str):
        return Curve(atoms_boundary(atoms), "exact", R.EXACT_SOURCE)
    top = proven_epsilon if proven_epsilon is not None and math.isfinite(proven_epsilon) else 1.0
    eps = np.linspace(0.0, 3.0 * top + 1.0, 90)
    curve = accountant.delta_curve([(mech.law, a.k)], epsilons=eps, budget=budget)
    ok = np.isfinite(curve.upper)
    if not np.any(ok):
        return Curve(None, "none", accountant.SOURCE, reason=curve.reason or "PLD not computed")
    return Curve(intersection_boundary(eps[ok], np.minimum(curve.upper[ok], 1.0)), "outer", accountant.SOURCE)


def randomized_response_rates(*, eps0: float, k: int, t: int) -> tuple[float, float]:
    """Exact (P_FA, P_MD) of "guess in from t yes answers" for k randomized answers (two categories):
    the yes count is Bin(k, e^{ε0}/(1 + e^{ε0})) if the truth is yes (H0), Bin(k, 1/(1 + e^{ε0})) if not."""
    high = 1.0 / (1.0 + math.exp(-eps0))
    return float(binom.cdf(t - 1, k, high)), float(binom.sf(t - 1, k, 1.0 - high))
