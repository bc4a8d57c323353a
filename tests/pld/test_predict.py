"""The grid width chosen before any transform (``dpviz.pld.predict``, docs/MATH.md §17.9), and the
one lower grid of a δ target (``composed._dominant``).

Independent routes: the Gaussian closed form (Steinke Cor. 8: k Gaussian steps are one Gaussian
with μ = √k/σ) for the saddlepoint ε, and the compositions themselves for the predicted width. The
prediction only chooses h: every interval is still certified, and must contain the truth."""

from __future__ import annotations

import pytest

from dpviz.mechanisms import canonical, gaussian, laplace
from dpviz.mechanisms.subsampling import subsample_remove
from dpviz.pld import accountant, composed, predict, refine
from dpviz.pld.lattice import anchor as lattice_anchor
from dpviz.pld.lattice import common_lattice as lattice_of
from dpviz.pld.refine import _bare, target_tail
from tests.pld.recording import composed_widths


def _gaussian_epsilon(sigma: float, k: int, delta: float) -> float:
    """ε of k Gaussian steps at δ (Steinke Cor. 8), by bisection on the closed-form δ(ε)."""
    lo, hi = 0.0, 200.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if gaussian.delta_for_epsilon(epsilon=mid, sigma=sigma, k=k) > delta:
            lo = mid
        else:
            hi = mid
    return hi


@pytest.mark.parametrize(("sigma", "k", "delta"), [(1.0, 10, 1e-5), (5.0, 200, 1e-8), (2.0, 1000, 1e-3)])
def test_saddlepoint_epsilon_is_close_to_the_closed_form(sigma, k, delta):
    law = gaussian.loss_law(sigma=sigma)
    eps, theta, curvature = predict.saddlepoint([(law, k)], delta, 1e-12)
    truth = _gaussian_epsilon(sigma, k, delta)
    assert eps == pytest.approx(truth, rel=0.03)
    assert theta > 0 and curvature > 0


@pytest.mark.parametrize(("q", "sigma", "k", "delta"),
                         [(0.01, 1.0, 1000, 1e-5), (0.002, 3.0, 2000, 1e-8), (0.2, 2.0, 300, 1e-6)])
def test_predicted_width_matches_the_composition(q, sigma, k, delta):
    """The width predicted at h is within a factor 1.6 of the width the composition reads at h
    (without its round-off bound: the discretisation's part, which is what is predicted)."""
    parts = [(subsample_remove(gaussian.loss_law(sigma=sigma), rate=q), k)]
    tail = target_tail(parts, delta=delta, epsilon=None, accuracy=2e-4)
    guess = predict.predict(parts, delta=delta, accuracy=2e-4, tail=tail)
    assert guess is not None
    c = composed.compose(parts, h=guess.h, tail=tail, total=True, offsets=True)
    lo, up = _bare(c).epsilon(delta)
    assert lo is not None and up is not None
    assert (up - lo) / 1.6 <= guess.width <= 1.6 * (up - lo)
    assert guess.epsilon == pytest.approx(0.5 * (lo + up), rel=0.1)


def test_laws_with_atoms_on_their_lattice_are_predicted():
    """Laplace's loss law has atoms at ±1/b: on a grid dividing their lattice (the one the refinement
    uses, ``lattice.common_lattice``: 1/b, the grid not shifted) both grids keep them exactly, and the
    second-moment law holds for the continuous part between. Every h tried divides the lattice;
    mass at +∞ (a law without one) is not predicted."""
    law = laplace.loss_law(scale=3.729)  # the benchmark's setting: 96 steps, δ = 5.4e-9
    lattice = lattice_of([(law, 96)])
    assert lattice == pytest.approx(1.0 / 3.729)
    guess = predict.predict([(law, 96)], delta=5.4e-9, accuracy=2e-4, tail=1e-13, lattice=lattice)
    assert guess is not None
    assert lattice / guess.h == pytest.approx(round(lattice / guess.h), rel=1e-12)
    c = composed.compose([(law, 96)], h=guess.h, tail=1e-13, total=True)
    lo, up = _bare(c).epsilon(5.4e-9)
    assert lo is not None and up is not None
    assert (up - lo) / 1.6 <= guess.width <= 1.6 * (up - lo)
    assert not predict.smooth([(canonical.loss_law(eps0=1.0, delta0=1e-3), 10)])


def test_a_missed_prediction_is_refined():
    """Laplace b = 2, 50 steps, δ = 1e-6: ε ≈ 18.75 sits among the composed atoms' lattice, where
    the second-moment law under-states the width about 13-fold (8.7e-3 read at the predicted
    h = 1/27). The refinement by the h² law then meets the accuracy, and the interval holds the
    value of a fixed fine grid (h = 1/200, an independent certified run)."""
    law = laplace.loss_law(scale=2.0)
    g = accountant.epsilon_bounds([(law, 50)], delta=1e-6)
    fine = accountant.epsilon_bounds([(law, 50)], delta=1e-6, h=1.0 / 200)
    assert g.relative_width <= 2e-4
    assert g.lower <= fine.upper and fine.lower <= g.upper


def test_one_composition_where_the_prediction_holds(monkeypatch):
    """DP-SGD-like: q = 0.01, σ = 1, 1000 steps, δ = 1e-5. The predicted grid meets the accuracy, so
    it is the only composition (the pilot and its refinement were two, or three), and it is not
    tilted (the round-off is minor there); the interval contains dp-accounting 0.6.0's value
    (h = 1e-4, connect-the-dots, a pessimistic estimate: inside or above)."""
    calls: list[dict] = []
    orig = refine.compose

    def counting(*args, **kw):
        calls.append(kw)
        return orig(*args, **kw)

    monkeypatch.setattr(refine, "compose", counting)
    law = subsample_remove(gaussian.loss_law(sigma=1.0), rate=0.01)
    g = accountant.epsilon_bounds([(law, 1000)], delta=1e-5)
    assert len(calls) == 1 and calls[0]["tilt"] is None
    assert g.relative_width <= 2e-4
    assert g.lower <= 1.8282436 <= g.upper  # dp-accounting 0.6.0, h = 1e-4: 1.8282436


def test_one_lower_grid_for_a_delta_target():
    """An asymmetric law read at one δ gets a lower grid for its dominant direction only; its lower
    end is that of the full composition's same direction, and the interval still contains the
    full composition's reading (both certified)."""
    parts = [(subsample_remove(gaussian.loss_law(sigma=1.0), rate=0.05), 200)]
    full = composed.compose(parts, h=2e-4, tail=1e-12, total=True)
    one = composed.compose(parts, h=2e-4, tail=1e-12, total=True, lower_at=1e-6)
    assert len(full.lower) == 2 and len(one.lower) == 1
    lo_full, up_full = full.epsilon(1e-6)
    lo_one, up_one = one.epsilon(1e-6)
    assert up_one == up_full
    assert lo_one == lo_full  # the dominant direction's lower end is the largest here
    assert lo_one <= up_full


@pytest.mark.parametrize("rate,k,epsilon", [(0.05, 200, 1.0), (0.003125, 1000, 1.0), (0.5, 300, 0.3)])
def test_one_lower_grid_for_an_epsilon_target(rate, k, epsilon):
    """At a target ε the dominant direction (largest upper δ) alone gets a lower grid where the other
    direction's upper δ is below its lower δ; the interval at ε is the full composition's, bit for bit
    (the other direction's lower end is below its upper end, so below the kept one)."""
    parts = [(subsample_remove(gaussian.loss_law(sigma=1.0), rate=rate), k)]
    full = composed.compose(parts, h=2e-4, tail=1e-12, total=True)
    one = composed.compose(parts, h=2e-4, tail=1e-12, total=True, lower_at_epsilon=epsilon)
    assert len(full.lower) == 2 and len(one.lower) == 1
    assert one.delta(epsilon) == full.delta(epsilon)


def test_both_lower_grids_where_the_directions_are_close_at_epsilon():
    """δ near 1 (q = 0.5, σ = 0.3, 300 steps, ε = 0.05): the other direction's upper δ is above the
    kept lower δ, so its lower grid is composed too, and the interval is the full composition's (the
    kept direction alone reads 0.99999999978 there, the other 0.99999999995)."""
    parts = [(subsample_remove(gaussian.loss_law(sigma=0.3), rate=0.5), 300)]
    full = composed.compose(parts, h=2e-3, tail=1e-12, total=True)
    one = composed.compose(parts, h=2e-3, tail=1e-12, total=True, lower_at_epsilon=0.05)
    dom = max(range(2), key=lambda i: one.upper[i].delta(0.05))
    assert one.upper[1 - dom].delta(0.05) > one.lower[0].delta(0.05)  # the case this test is about
    assert len(one.lower) == 2 and one.delta(0.05) == full.delta(0.05)


def test_the_width_law_sees_the_parity_of_the_cells_between_atoms():
    """A subsampled Laplace (b = 6.196, q = 0.0015, 4,404 steps, δ = 6.8e-4: the benchmark's) has two
    atoms with a narrow continuous part between. With 23 cells between them the post-processing's
    last symbol is left unbalanced and stored below its loss, so the lower grid loses Q-mass at first
    order; with 24 it is balanced. The measured law (Σk·ΔΛ(θ)/θ) predicts the width the composition
    reads at both, within 1.3 (the second-moment law said 6.8e-6 at 23 cells, where 1.27e-4 is read),
    and the prediction keeps the narrower parity: one composition meets the accuracy."""
    parts = [(subsample_remove(laplace.loss_law(scale=6.196), rate=0.0015), 4404)]
    delta = 6.8e-4
    tail = target_tail(parts, delta=delta, epsilon=None, accuracy=2e-4)
    anchor = lattice_anchor(parts)
    assert anchor is not None
    _eps, theta, _curvature = predict.saddlepoint(parts, delta, tail)
    read = {}
    for cells in (23, 24):
        h = anchor / cells
        c = composed.compose(parts, h=h, tail=tail, total=True, offsets=True)
        lo, up = _bare(c).epsilon(delta)
        assert lo is not None and up is not None
        read[cells] = up - lo
        predicted = predict.width_at(parts, h, theta, tail, offsets=True)
        assert read[cells] / 1.3 <= predicted <= 1.3 * read[cells]
    assert read[23] > 10 * read[24]
    guess = predict.predict(parts, delta=delta, accuracy=2e-4, tail=tail, lattice=anchor, offsets=True)
    assert guess is not None
    c = composed.compose(parts, h=guess.h, tail=tail, total=True, offsets=True)
    lo, up = c.epsilon(delta)
    assert lo is not None and up is not None
    assert up - lo <= 2e-4 * max(up, 0.05)


@pytest.mark.parametrize("lead", [0, 1])
def test_a_spared_direction_never_sets_the_interval(lead):
    """The directions other than the predicted lead get their upper grid at c·h (``composed._again_at_h``):
    with the right lead the other direction's grid is coarser and the interval is the one without
    sparing, bit for bit; with the wrong lead (the larger direction spared) its coarse grid reads
    above the lead's and it is composed again at h: the same interval again."""
    parts = [(subsample_remove(gaussian.loss_law(sigma=3.313), rate=0.00027), 5619)]  # the benchmark's
    delta, h, tail = 1e-7, 3.7e-6, 2e-12
    plain = composed.compose(parts, h=h, tail=tail, total=True, offsets=True, lower_at=delta)
    reads = [g.epsilon(delta) for g in plain.upper]
    assert reads[0] > reads[1]  # the remove direction leads here
    spared = composed.compose(parts, h=h, tail=tail, total=True, offsets=True, lower_at=delta,
                              spare=(lead, 4.0))
    assert spared.epsilon(delta) == plain.epsilon(delta)
    widths = [g.h for g in spared.upper]
    if lead == 0:
        assert widths == [pytest.approx(h), pytest.approx(4 * h)]
    else:
        assert widths == [pytest.approx(h), pytest.approx(h)]  # composed again at h


def test_the_prediction_spares_the_smaller_direction():
    """At q = 2.7e-4 the two directions' ε differ by about 2 % against a width of 2e-4: the add
    direction is predicted to trail, and may be composed several times coarser."""
    parts = [(subsample_remove(gaussian.loss_law(sigma=3.313), rate=0.00027), 5619)]
    tail = target_tail(parts, delta=1e-7, epsilon=None, accuracy=2e-4)
    guess = predict.predict(parts, delta=1e-7, accuracy=2e-4, tail=tail, offsets=True)
    assert guess is not None and guess.spare is not None
    lead, factor = guess.spare
    assert lead == 0 and 2.0 <= factor <= predict.SPARE_MAX


@pytest.mark.parametrize(("sigma", "k", "epsilon"), [(1.0, 10, 12.0), (5.0, 200, 15.0), (2.0, 1000, 200.0)])
def test_saddlepoint_delta_at_epsilon_is_close_to_the_closed_form(sigma, k, epsilon):
    """δ at a target ε (``saddlepoint_at``): Λ′(θ) = ε, and the saddlepoint δ within 30 % of the
    Gaussian closed form (Steinke Cor. 8), the only use being a guess of the width; none at or below
    the composed mean loss kμ²/2 (θ ≤ 0: δ is not made in the tail, the pilot decides)."""
    law = gaussian.loss_law(sigma=sigma)
    found = predict.saddlepoint_at([(law, k)], epsilon, 1e-12)
    assert found is not None
    delta, theta, curvature = found
    assert delta == pytest.approx(gaussian.delta_for_epsilon(epsilon=epsilon, sigma=sigma, k=k), rel=0.3)
    assert theta > 0 and curvature > 0
    assert predict.saddlepoint_at([(law, k)], 0.5 * k / sigma**2, 1e-12) is None  # ε at the mean loss


@pytest.mark.parametrize(("sigma", "k", "epsilon"), [(1.0, 10, 8.0), (3.0, 1000, 80.0), (2.0, 100, 20.0)])
def test_delta_target_composed_at_the_predicted_width_holds_the_closed_form(monkeypatch, sigma, k, epsilon):
    """δ at a target ε above the mean loss of k Gaussian steps starts at the width predicted for it
    (no pilot): at most one refinement after it, within the accuracy, and the interval holds the
    closed form."""
    hs = composed_widths(monkeypatch)
    g = accountant.delta_bounds([(gaussian.loss_law(sigma=sigma), k)], epsilon=epsilon)
    truth = gaussian.delta_for_epsilon(epsilon=epsilon, sigma=sigma, k=k)
    assert g.lower <= truth <= g.upper
    assert g.upper - g.lower <= 2e-4 * g.upper
    assert len(set(hs)) <= 2


def test_delta_target_one_composition_on_the_mechanisms_page_default(monkeypatch):
    """DP-SGD-like, as the Mechanisms page asks "δ at ε = 1": q = 0.01, σ = 1, 1000 steps. The width
    predicted for δ (the saddlepoint's slope of ln δ, §17.9) meets the accuracy in one composition
    (the pilot and its refinement were three, and stopped 1.13 times wider than asked); the interval
    overlaps an independent certified run on a fixed finer grid."""
    law = subsample_remove(gaussian.loss_law(sigma=1.0), rate=0.01)
    hs = composed_widths(monkeypatch)
    g = accountant.delta_bounds([(law, 1000)], epsilon=1.0)
    monkeypatch.undo()
    assert len(hs) == 1
    assert g.upper - g.lower <= 2e-4 * g.upper
    fine = accountant.delta_bounds([(law, 1000)], epsilon=1.0, h=0.5 * hs[0])
    assert max(g.lower, fine.lower) <= min(g.upper, fine.upper)
    monkeypatch.setattr(refine, "PREDICT_EPSILON_TARGET", False)
    pilot = accountant.delta_bounds([(law, 1000)], epsilon=1.0)  # the route before: also certified
    assert max(g.lower, pilot.lower) <= min(g.upper, pilot.upper)
