"""The routes against Google's dp-accounting (test-only oracle): replace-one subsampling, a mix
of different mechanisms (its heterogeneous PLD composition) and the RDP route."""

from __future__ import annotations

import warnings

import pytest
from dp_accounting import dp_event, rdp
from dp_accounting.pld import privacy_loss_distribution as ref
from dp_accounting.privacy_accountant import NeighboringRelation as NR

from dpviz.mechanisms import routes as R
from dpviz.mechanisms.registry import make

REF_RTOL = 2e-3  # dp-accounting's own discretisation error at h = 1e-4


def test_replace_one_matches_dp_accounting() -> None:
    """Same pair as dp-accounting's REPLACE_ONE: ((1−q)N(0) + qN(Δ), (1−q)N(0) + qN(−Δ))."""
    ours = R.pld([(make("gaussian", sigma=1.0, sampling_rate=0.05, neighbouring="replace-one"), 100)],
                 delta=1e-5)
    pess = ref.from_gaussian_mechanism(1.0, sampling_prob=0.05, neighboring_relation=NR.REPLACE_ONE)
    theirs = pess.self_compose(100).get_epsilon_for_delta(1e-5)
    assert ours.lower <= theirs and theirs == pytest.approx(ours.upper, rel=REF_RTOL)


def test_mix_matches_dp_accounting_heterogeneous_composition() -> None:
    mix = [(make("gaussian", sigma=1.0, sampling_rate=0.01), 300), (make("laplace", scale=5.0), 10)]
    ours = R.pld(mix, delta=1e-6)
    g = ref.from_gaussian_mechanism(1.0, sampling_prob=0.01).self_compose(300)
    lap = ref.from_laplace_mechanism(5.0).self_compose(10)
    theirs = g.compose(lap).get_epsilon_for_delta(1e-6)
    assert ours.lower <= theirs and theirs == pytest.approx(ours.upper, rel=REF_RTOL)


@pytest.mark.parametrize(("sigma", "q", "k"), [(1.1, 0.01, 1000), (2.0, 0.1, 100), (0.8, 1.0, 5)])
def test_rdp_route_matches_dp_accounting_rdp(sigma: float, q: float, k: int) -> None:
    ours = R.rdp([(make("gaussian", sigma=sigma, sampling_rate=q), k)], delta=1e-5).epsilon
    acc = rdp.RdpAccountant()
    event = dp_event.GaussianDpEvent(sigma)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc.compose(dp_event.PoissonSampledDpEvent(q, event) if q < 1 else event, k)
        theirs = acc.get_epsilon(1e-5)
    # the same Thm 34 curve and conversion, on different sets of orders
    assert ours == pytest.approx(theirs, rel=3e-2)
