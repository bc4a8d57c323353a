"""The questions the "Database priors" page asks, as data (no Streamlit).

A :class:`Question` is one GCE setting (a membership constraint or an adversary prior);
``bounds`` answers it with every applicable bound, ``regions`` gives the privacy regions
of the exact answer and of classic composition, ``epsilon_series`` ε against k.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from dpviz.composition import homogeneous
from dpviz.gce import constraints, hypotheses, summary
from dpviz.gce.exact import TooLargeError, exact_pair
from dpviz.gce.result import GceBound
from dpviz.regions import method_region
from dpviz.regions.boundary import Boundary
from dpviz.validation import ParameterError, check_count

KINDS = ("cap", "features", "uniform-nonzero", "at-least")


@dataclass(frozen=True)
class Preset:
    key: str
    title: str
    kind: str
    story: str
    cap: int = 1
    k2: int = 1


PRESETS: dict[str, Preset] = {p.key: p for p in (
    Preset("hospitals", "365 hospital nights", "cap",
           "k hospitals each release a statistic about last year's patients. Nobody spends more than 365 "
           "nights in hospital, so a person is in at most 365 of the databases (HBW §V-A, Ex. 1).", cap=365),
    Preset("subsidiaries", "Subsidiaries", "cap",
           "Each of k subsidiaries releases a statistic about its employees; everyone works for exactly one "
           "subsidiary, so a person is in at most one database (HBW §V-A, Ex. 2).", cap=1),
    Preset("features", "Free vs paid features", "features",
           "Usage columns of one app: common features, ad features (free users only) and premium features "
           "(paid users only). A user's record touches one of two column sets, or none (HBW §V-A, Ex. 3)."),
    Preset("nonzero", "In at least one database", "uniform-nonzero",
           "The adversary wants to know whether the target is in *any* of the k databases, with no idea "
           "which ones: 0⃗ against the uniform prior over all b ≠ 0⃗ (HBW §V-B)."),
    Preset("atleast", "In at least k' databases", "at-least",
           "The adversary wants to know whether the target is in at least k' databases (e.g. has seen many "
           "doctors): U{|b| < k'} against U{|b| ≥ k'} (HBW §III-A, Ex. 2).", k2=3),
    Preset("custom", "Custom", "cap", "Choose the constraint or prior and every parameter yourself."),
)}

LABELS: dict[str, str] = {
    "classic": "Classic: compose all k (no prior)",
    "exact": "Exact worst case",
    "cap_basic": "Constraint + basic composition",
    "cap_advanced": "Constraint + advanced composition (DRV)",
    "cap_kov": "Constraint + KOV Thm 3.4",
    "parallel": "Parallel composition (McSherry)",
    "cor7": "HBW Cor. 7 (= Eq. 3-4)",
    "theorem3_basic": "HBW Thm 3 + basic composition",
    "theorem3_advanced": "HBW Thm 3 + advanced composition",
    "theorem3_optimal": "HBW Thm 3 + optimal composition",
    "refinement": "HBW Alg. 3 refinement + optimal composition",
}


@dataclass(frozen=True)
class Question:
    """One GCE setting with homogeneous (ε0, δ0)-DP mechanisms and a target δ."""

    kind: str
    k: int
    eps0: float
    delta0: float
    delta: float
    cap: int = 1
    neighbouring: str = "unbounded"
    k2: int = 1
    common: int = 4
    free_only: int = 3
    paid_only: int = 5

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ParameterError("constraint / prior", self.kind, "one of " + ", ".join(KINDS))
        constraints.check_neighbouring(self.neighbouring)

    @property
    def databases(self) -> int:
        return self.common + self.free_only + self.paid_only if self.kind == "features" else self.k

    def compositions(self) -> int | None:
        """d for constraints (mechanisms that remain), None for priors."""
        if self.kind == "cap":
            return constraints.compositions_for_cap(k=self.k, cap=self.cap,
                                                    neighbouring=self.neighbouring)  # type: ignore[arg-type]
        if self.kind == "features":
            return constraints.feature_compositions(common=self.common, free_only=self.free_only,
                                                    paid_only=self.paid_only,
                                                    neighbouring=self.neighbouring)  # type: ignore[arg-type]
        return None

    def hypotheses(self) -> tuple[hypotheses.Exchangeable, hypotheses.Exchangeable] | None:
        if self.kind == "uniform-nonzero":
            return hypotheses.point_zero(k=self.k), hypotheses.uniform_nonzero(k=self.k)
        if self.kind == "at-least":
            return hypotheses.below(k=self.k, k2=self.k2), hypotheses.at_least(k=self.k, k2=self.k2)
        return None


def bounds(q: Question) -> dict[str, GceBound]:
    """Every applicable bound: ε at total δ ≤ q.delta, with kind, source and directions."""
    common = {"eps0": q.eps0, "delta0": q.delta0, "delta": q.delta}
    if q.kind == "cap":
        return summary.capped(k=q.k, cap=q.cap, neighbouring=q.neighbouring, **common)
    if q.kind == "features":
        allowed = constraints.feature_columns(common=q.common, free_only=q.free_only, paid_only=q.paid_only)
        return summary.allowed_set(allowed, neighbouring=q.neighbouring, **common)
    if q.kind == "uniform-nonzero":
        return summary.uniform_nonzero(k=q.k, **common)
    check_count(q.k2, field="k'", maximum=q.k)
    return summary.at_least(k=q.k, k2=q.k2, **common)


def regions(q: Question) -> tuple[dict[str, Boundary], str]:
    """Regions {"optimal": classic k-fold, "exact": the answer}; a note if exact is too large."""
    k = q.databases
    out = {"optimal": method_region("optimal", homogeneous(k=k, eps0=q.eps0, delta0=q.delta0))}
    d = q.compositions()
    if d is not None:
        out["exact"] = method_region("optimal", homogeneous(k=max(d, 1), eps0=q.eps0, delta0=q.delta0)) \
            if d > 0 else Boundary(p_fa=np.array([0.0, 1.0]), p_md=np.array([1.0, 0.0]))
        return out, ""
    p0, p1 = q.hypotheses()  # type: ignore[misc]
    try:
        out["exact"] = exact_pair(p0, p1, eps0=q.eps0, delta0=q.delta0).region()
    except TooLargeError as exc:
        return out, f"The exact region is too large to compute here ({exc.value})."
    return out, ""


def classic_and_exact(q: Question) -> dict[str, GceBound]:
    """Only the two headline numbers (cheaper than :func:`bounds`)."""
    common = {"eps0": q.eps0, "delta0": q.delta0, "delta": q.delta}
    out = {"classic": summary.classic(k=q.databases, **common)}
    d = q.compositions()
    if d is not None:
        out["exact"] = constraints.composed_bounds(d=d, **common)["optimal"]
    else:
        p0, p1 = q.hypotheses()  # type: ignore[misc]
        out["exact"] = summary.exact(p0, p1, **common)
    return out


def epsilon_series(q: Question, *, points: int = 24) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """ε at q.delta against k ∈ [1, q.k] (log-spaced): classic and the exact answer."""
    if q.kind == "features":
        res = classic_and_exact(q)
        return np.array([q.databases]), {key: np.array([_eps(b)]) for key, b in res.items()}
    lo = q.k2 if q.kind == "at-least" else 1
    n = points if q.kind != "at-least" else min(points, 12 if q.delta0 == 0 else 8)
    ks = np.unique(np.geomspace(lo, q.k, num=n).round().astype(int))
    series: dict[str, list[float]] = {"classic": [], "exact": []}
    for k in ks:
        res = classic_and_exact(replace(q, k=int(k), cap=min(q.cap, int(k))))
        for key in series:
            series[key].append(_eps(res[key]))
    return ks, {key: np.asarray(v) for key, v in series.items()}


def _eps(b: GceBound) -> float:
    return float(b.epsilon) if b.feasible and b.epsilon is not None else float("nan")
