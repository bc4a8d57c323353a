"""dp-accounting (Google) as a test-only oracle: its pessimistic PLD estimate is an upper bound
and its optimistic one a lower bound, so they must straddle our certified interval:
dp_opt ≤ our upper and our lower ≤ dp_pess; and their pessimistic value must be close to ours.
"""

from __future__ import annotations

import pytest
from dp_accounting.pld import privacy_loss_distribution as ref

from dpviz.mechanisms import gaussian, laplace
from dpviz.mechanisms.subsampling import subsample_remove
from dpviz.pld import epsilon_bounds

DELTA = 1e-5
# dp-accounting's own error at its default h = 1e-4 (connect-the-dots): ≲ 1e-3 relative here.
REF_RTOL = 1e-3


def _ref_eps(builder, k: int, **kw) -> tuple[float, float]:
    out = []
    for pess in (False, True):
        pld = builder(pessimistic_estimate=pess, **kw)
        out.append(pld.self_compose(k).get_epsilon_for_delta(DELTA))
    return out[0], out[1]


def _check(ours, opt, pess):
    assert opt <= ours.upper
    assert ours.lower <= pess
    assert pess == pytest.approx(ours.upper, rel=REF_RTOL)


@pytest.mark.parametrize(("scale", "k"), [(1.0, 10), (5.0, 200)])
def test_laplace(scale, k):
    ours = epsilon_bounds([(laplace.loss_law(scale=scale), k)], delta=DELTA, h=1e-4)
    opt, pess = _ref_eps(ref.from_laplace_mechanism, k, parameter=scale)
    _check(ours, opt, pess)


@pytest.mark.parametrize("sigma", [0.8, 1.1, 2.0])
def test_dp_sgd_1000_steps(sigma):
    law = subsample_remove(gaussian.loss_law(sigma=sigma), rate=0.01)
    ours = epsilon_bounds([(law, 1000)], delta=DELTA, h=1e-4)
    opt, pess = _ref_eps(ref.from_gaussian_mechanism, 1000, standard_deviation=sigma, sampling_prob=0.01)
    _check(ours, opt, pess)
    assert ours.relative_width < 1e-3


@pytest.mark.parametrize("sigma", [0.8, 1.1, 2.0])
def test_dp_sgd_10000_steps(sigma):  # ≈3 s each: fast enough to run by default
    law = subsample_remove(gaussian.loss_law(sigma=sigma), rate=0.01)
    ours = epsilon_bounds([(law, 10_000)], delta=DELTA, h=1e-4)
    opt, pess = _ref_eps(ref.from_gaussian_mechanism, 10_000, standard_deviation=sigma, sampling_prob=0.01)
    _check(ours, opt, pess)
    assert ours.relative_width < 1e-3
