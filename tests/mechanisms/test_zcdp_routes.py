"""The zCDP route of the mechanisms (Steinke Lemma 12, Prop. 16, Thm 13, Prop. 14; docs/MATH.md §11):
ρ from the seed's statements, sound against the exact answers, never the headline unless best."""

from __future__ import annotations

import math

import pytest

from dpviz.composition import METHODS, homogeneous
from dpviz.composition import zcdp as zcdp_method
from dpviz.guarantee import Kind, Status
from dpviz.mechanisms import routes
from dpviz.mechanisms.registry import make
from dpviz.views import mechanisms as view


@pytest.mark.parametrize(("sigma", "sens", "k"), [(2.0, 1.0, 100), (0.7, 1.0, 1), (5.0, 3.0, 1000)])
def test_gaussian_rho_is_lemma12(sigma: float, sens: float, k: int) -> None:
    g = make("gaussian", sigma=sigma, sensitivity=sens)
    r, how = routes.zcdp_rho([(g, k)])  # type: ignore[misc]
    assert how == "Lemma 12"
    assert r == pytest.approx(k * sens**2 / (2 * sigma**2), rel=1e-14)
    assert r >= k * sens**2 / (2 * sigma**2) * (1 - 1e-16)  # rounded up, never down


@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-2])
def test_gaussian_route_is_sound_and_not_the_headline(delta: float) -> None:
    parts = [(make("gaussian", sigma=2.0), 100)]
    z = routes.zcdp(parts, delta=delta)
    exact = routes.analytic(parts, delta=delta)
    assert z.kind is Kind.UPPER and z.status is Status.OK and "Lemma 12" in z.source
    assert exact is not None and exact.lower is not None and z.epsilon is not None
    assert z.epsilon >= exact.lower  # never below the exact ε (Steinke Cor. 8/10)
    key, best = routes.best(routes.routes(parts, delta=delta))
    assert key == "analytic" and best.upper is not None and best.upper <= z.epsilon


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_gaussian_delta_mode_is_above_the_exact_delta(eps: float) -> None:
    parts = [(make("gaussian", sigma=1.5), 20)]
    z = routes.zcdp(parts, epsilon=eps)
    exact = routes.analytic(parts, epsilon=eps)
    assert exact is not None and exact.delta is not None and z.delta is not None
    assert z.solved == "delta" and z.delta >= exact.delta


@pytest.mark.parametrize(("kind", "params", "eps0"), [
    ("randomized-response", {"eps0": 0.5}, 0.5),
    ("laplace", {"scale": 10.0}, 0.1),
])
def test_pure_rho_is_prop16_and_equals_the_composition_method(kind: str, params: dict, eps0: float) -> None:
    """A pure ε0-DP mechanism: ρ = kε0²/2, the same number as METHODS["zcdp"] on (ε0, 0)×k; the
    generic optimum (KOV Thm 3.3 for ε0-DP, exact over all such mechanisms) is never above it."""
    m, k = make(kind, **params), 100
    parts = [(m, k)]
    r, how = routes.zcdp_rho(parts)  # type: ignore[misc]
    assert how == "Prop. 16" and r == pytest.approx(k * eps0**2 / 2, rel=1e-12)
    z = routes.zcdp(parts, delta=1e-6)
    method = METHODS["zcdp"].epsilon_for_delta(homogeneous(k=k, eps0=eps0, delta0=0.0), delta=1e-6)
    assert z.epsilon == pytest.approx(method.epsilon, rel=1e-12)
    gen = routes.generic(parts, delta=1e-6)
    assert gen.epsilon is not None and z.epsilon is not None and gen.epsilon <= z.epsilon


def test_mix_adds_rho_thm13() -> None:
    parts = [(make("gaussian", sigma=3.0), 10), (make("randomized-response", eps0=0.2), 50)]
    r, how = routes.zcdp_rho(parts)  # type: ignore[misc]
    assert r == pytest.approx(10 / 18 + 50 * 0.02, rel=1e-12)
    assert how == "Lemma 12 + Prop. 16"
    z = routes.zcdp(parts, delta=1e-5)
    assert z.epsilon == pytest.approx(zcdp_method.convert_epsilon(r, 1e-5)[0], rel=1e-15)


@pytest.mark.parametrize("mech", [make("gaussian", sigma=2.0, sampling_rate=0.1),
                                  make("discrete-gaussian", sigma=2.0)])
def test_not_from_the_seed_is_not_computed_and_left_off_the_page(mech) -> None:
    """A subsampled Gaussian or a discrete Gaussian is neither Lemma 12's mechanism nor pure: no ρ
    from the seed (their Rényi curves are the rdp route)."""
    g = routes.zcdp([(mech, 10)], delta=1e-6)
    assert g.status is Status.NOT_COMPUTED and "Lemma 12" in (g.reason or "")
    assert "zcdp" not in view.quick(mech, k=10, delta=1e-6)


def test_page_lists_the_zcdp_row() -> None:
    rows = view.quick(make("gaussian", sigma=2.0), k=100, delta=1e-6)
    assert "zcdp" in rows and rows["zcdp"].feasible
    assert routes.zcdp([(make("gaussian", sigma=2.0), 1)], delta=0.0).status is Status.NOT_COMPUTED


def test_zero_noise_limit_is_finite_and_large() -> None:
    """ρ grows as Δ²/σ²; at σ = 1e-3 (ρ = 5e5) the route still answers, far above the exact ε."""
    parts = [(make("gaussian", sigma=1e-3), 1)]
    z = routes.zcdp(parts, delta=1e-6)
    assert z.epsilon is not None and math.isfinite(z.epsilon) and z.epsilon > 5e5
