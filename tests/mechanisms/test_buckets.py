"""Privacy buckets (Meiser-Mohammadi): soundness against exact answers and the PLD route."""

from __future__ import annotations

import math

import pytest

from dpviz.buckets import Buckets, check_buckets, epsilon_from_delta_curve
from dpviz.composition import homogeneous, optimal
from dpviz.mechanisms import gaussian, laplace, randomized_response
from dpviz.pld import compose
from dpviz.validation import ParameterError

# The bounds already include the a-priori FFT round-off bound ``Buckets.err``, so no slack is
# needed; only the exact side (LossAtoms, log space) carries ≈1e-16 relative error.
ROUNDOFF = 1e-15


@pytest.mark.parametrize("squaring", [False, True])
def test_rr_buckets_bracket_kov(squaring):
    law = randomized_response.loss_law(eps0=0.5)
    b = Buckets.from_law(law, log_f=5e-4, n=20_000).self_compose(16, squaring=squaring)
    levels = homogeneous(k=16, eps0=0.5, delta0=0.0)
    for eps in (0.0, 1.0, 3.0, 6.0):
        exact = optimal.delta_for_epsilon(levels, epsilon=eps).delta
        assert b.delta_lower(eps) <= exact + ROUNDOFF
        assert exact <= b.delta_upper(eps) + ROUNDOFF
        assert b.delta_upper(eps) <= b.delta_upper(eps, error_correction=False) + ROUNDOFF


@pytest.mark.parametrize("squaring", [False, True])
def test_gaussian_buckets_bracket_closed_form(squaring):
    law = gaussian.loss_law(sigma=4.0)
    b = Buckets.from_law(law, log_f=1e-3, n=20_000).self_compose(8, squaring=squaring)
    for eps in (0.0, 0.5, 1.0):
        exact = gaussian.delta_for_epsilon(epsilon=eps, sigma=4.0, k=8)
        assert b.delta_lower(eps) <= exact + ROUNDOFF
        assert exact <= b.delta_upper(eps) + ROUNDOFF


def test_error_correction_tightens_thm1():
    """The real EC terms must help on a continuous law (else the §4 machinery is idle)."""
    law = gaussian.loss_law(sigma=4.0)
    b = Buckets.from_law(law, log_f=1e-2, n=2_000).self_compose(4)
    ec, plain = b.delta_upper(0.5), b.delta_upper(0.5, error_correction=False)
    assert ec < plain - 1e-4


def test_buckets_vs_pld_on_laplace():
    """Buckets and the PLD route bracket the same truth: their intervals must overlap."""
    law = laplace.loss_law(scale=2.0)
    b = Buckets.from_law(law, log_f=5e-4, n=20_000).self_compose(20)
    c = compose([(law, 20)], h=5e-4)
    for eps in (0.5, 2.0, 4.0):
        p_lo, p_up = c.delta(eps)
        assert b.delta_lower(eps) <= p_up + ROUNDOFF
        assert p_lo <= b.delta_upper(eps) + ROUNDOFF


def test_squaring_coarsens_factor():
    law = randomized_response.loss_law(eps0=0.2)
    b = Buckets.from_law(law, log_f=1e-3, n=1_000)
    s = b.squared()
    assert s.log_f == pytest.approx(2e-3)
    assert s.a.sum() == pytest.approx(b.a.sum())
    assert s.slack == pytest.approx(1.0)  # (1 + 1)/2


def test_epsilon_from_curve_sides():
    law = randomized_response.loss_law(eps0=0.5)
    b = Buckets.from_law(law, log_f=5e-4, n=20_000).self_compose(10)
    exact = optimal.epsilon_for_delta(homogeneous(k=10, eps0=0.5, delta0=0.0), delta=1e-5).epsilon
    lo = epsilon_from_delta_curve(b.delta_lower, delta=1e-5, lower=True)
    up = epsilon_from_delta_curve(b.delta_upper, delta=1e-5)
    assert lo <= exact <= up
    assert math.isclose(lo, up, rel_tol=1e-6)


def test_bucket_count_validation():
    with pytest.raises(ParameterError, match="buckets must be an odd whole number"):
        check_buckets(100_000)
    assert check_buckets(100_001) == 100_001


def test_overflowing_product_has_no_bounds_instead_of_a_silent_zero():
    """An FFT of overflowing tilted masses gives inf/NaN without any warning, and the lower bound's
    max(0, NaN) was a silent 0 (issue 11 item 5). Such a node now reports no bounds (swamped)."""

    from dpviz.mechanisms import canonical
    b = Buckets.from_law(canonical.loss_law(eps0=1.0, delta0=0.0), log_f=0.5, n=8)
    qv = b.q_virt.copy()
    qv[0] = 1e200  # bucket −n is left out of the round-off norms: only the FFT overflows
    huge = Buckets(log_f=b.log_f, n=b.n, a=b.a, a_inf=b.a_inf, q_real=b.q_real,
                   q_virt=qv, log_q_virt_inf=b.log_q_virt_inf, slack=b.slack)
    with pytest.warns(RuntimeWarning, match="overflow"):  # numpy says so; pocketfft itself would not
        out = huge.compose(huge)
    assert out.swamped
    assert out.delta_upper(0.5) == 1.0 and out.delta_lower(0.5) == 0.0  # trivial, and said so


def test_fft_helper_is_shared_with_the_pld_grids():
    """One FFT convolution and one round-off bound (issue 11 item 4): buckets and grids use
    ``dpviz.pld.fft``."""
    import numpy as np

    from dpviz.buckets import buckets as bmod
    from dpviz.pld import fft, power
    assert bmod.fft is fft and power.fft is fft
    a = np.array([0.25, 0.5, 0.25])
    assert np.allclose(fft.convolve(a, a, same=True), np.convolve(a, a), atol=1e-16)


def test_a_squaring_node_transforms_its_arrays_once(monkeypatch):
    """Binary powering squares one node (issue 20: it squared two equal copies, each transformed):
    every base product convolves an array with itself, and the tree is the one of two copies."""
    from dpviz.buckets import buckets as bucket_module

    law = gaussian.loss_law(sigma=1.0)
    leaf = Buckets.from_law(law, log_f=2e-3, n=2_000)
    sames = []
    plain = bucket_module.fft.convolve

    def counted(a, b, *, same=False):
        sames.append(same)
        return plain(a, b, same=same)

    monkeypatch.setattr(bucket_module.fft, "convolve", counted)
    tree = leaf.self_compose(8, squaring=True)  # three squarings, no other product
    assert sames == [True] * 9
    monkeypatch.setattr(bucket_module.fft, "convolve", plain)
    copies = leaf
    for _ in range(3):
        copies = copies.squared().compose(copies.squared())
    for name in ("a", "q_real", "q_virt"):
        assert (getattr(tree, name) == getattr(copies, name)).all(), name
    assert (tree.a_inf, tree.err, tree.log_f) == (copies.a_inf, copies.err, copies.log_f)


def _thm1_reference(b, eps):
    """δ bounds of ``b`` at ε with the buckets above ε picked one by one (i·ln f > ε), as written."""
    import numpy as np

    i = b.index
    above = np.flatnonzero(i * b.log_f > eps)
    gap = eps - i[above] * b.log_f
    plain = b.a[above] * -np.expm1(gap)
    safe = (i[above] - b.slack) * b.log_f >= eps
    corrected = np.maximum(b.a[above] - np.exp(gap) * b.q_real[above], 0.0)
    upper = min(1.0, b.a_inf + float(np.where(safe, np.minimum(plain, corrected), plain).sum()) + b.err)
    above = above[above > 0]
    body = float(np.maximum(b.a[above] - np.exp(eps - i[above] * b.log_f) * b.q_virt[above], 0.0).sum())
    log_b = eps + b.log_q_virt_inf
    inf_term = 0.0 if log_b > 1.0 else max(0.0, b.a_inf - math.exp(log_b))
    return upper, max(0.0, body + inf_term - b.err)


def test_delta_bounds_read_the_buckets_above_epsilon_also_on_a_boundary():
    """The bounds take the buckets above ε as one run (``Buckets._above``, for the bisection's many
    reads): the same floats as picking them one by one, at ε on a bucket boundary (i·ln f itself,
    which is not above) and between boundaries."""
    law = gaussian.loss_law(sigma=1.0)
    b = Buckets.from_law(law, log_f=2e-3, n=2_000).self_compose(20, squaring=True)
    levels = b.index * b.log_f
    for eps in [0.0, *levels[[2000, 2001, 2500, 3100, 3999, 4000]], 0.37, 1.2345, 9.0, 1e4]:
        upper, lower = _thm1_reference(b, float(eps))
        assert b.delta_upper(float(eps)) == upper
        assert b.delta_lower(float(eps)) == lower
