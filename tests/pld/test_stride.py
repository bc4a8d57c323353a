"""Atoms-only laws whose atoms sit on every m-th point of their common lattice are composed on a grid
m times coarser, shifted onto an atom (``lattice.stride``): every atom still on a grid point, m times
fewer bins. A discrete Gaussian with odd Δ has losses at the odd multiples of Δ/(2σ²) only."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpviz.mechanisms import discrete_gaussian, randomized_response
from dpviz.pld import accountant, refine
from dpviz.pld.lattice import common_lattice, stride


@pytest.mark.parametrize(("sensitivity", "expected"), [(1, 2), (3, 2), (2, 1), (4, 1)])
def test_discrete_gaussian_stride(sensitivity, expected) -> None:
    law = discrete_gaussian.loss_law(sigma=3.0, sensitivity=sensitivity)
    lattice = common_lattice([(law, 1)])
    assert lattice is not None
    assert stride([(law, 1)], lattice) == expected
    m = stride([(law, 1)], lattice)
    t = np.rint(law.loss / lattice).astype(np.int64)
    assert np.all((t - t[0]) % m == 0)


def test_randomized_response_atoms_two_lattice_steps_apart() -> None:
    law = randomized_response.loss_law(eps0=0.3)
    assert stride([(law, 5)], common_lattice([(law, 5)])) == 2


def _exact_delta(law, k: int, eps: float) -> float:
    """δ(ε) of both directions of the k-fold composition, every k-tuple of atoms enumerated."""
    best = 0.0
    for d in (law, law.reversed()):
        keep = (d.p > 1e-30) | (d.q > 1e-30)
        p, q = d.p[keep], d.q[keep]
        total = 0.0
        for combo in itertools.product(range(p.size), repeat=k):
            total += max(math.prod(p[i] for i in combo) - math.exp(eps) * math.prod(q[i] for i in combo), 0.0)
        best = max(best, total)
    return best


@pytest.mark.parametrize(("sigma", "sensitivity", "k", "eps"), [(1.0, 1, 2, 0.5), (2.0, 3, 2, 1.0),
                                                                 (1.5, 1, 3, 1.0)])
def test_strided_interval_holds_the_enumerated_delta_and_is_no_wider(monkeypatch, sigma, sensitivity, k,
                                                                     eps) -> None:
    law = discrete_gaussian.loss_law(sigma=sigma, sensitivity=sensitivity)
    exact = _exact_delta(law, k, eps)
    g = accountant.delta_bounds([(law, k)], epsilon=eps)
    assert g.lower <= exact * (1 + 1e-9) + 1e-300 and exact <= g.upper * (1 + 1e-9)
    monkeypatch.setattr(refine, "stride", lambda parts, lattice: 1)  # the plain lattice
    plain = accountant.delta_bounds([(law, k)], epsilon=eps)
    assert plain.lower <= exact * (1 + 1e-9) + 1e-300 and exact <= plain.upper * (1 + 1e-9)
    assert g.upper - g.lower <= (plain.upper - plain.lower) * (1 + 1e-6) + 1e-18


def test_strided_epsilon_at_many_steps_within_the_plain_lattice_interval(monkeypatch) -> None:
    """σ = 30, 50 steps, δ = 1e-6: the strided grid has half the bins; its certified interval lies
    inside the one of the plain lattice (both hold ε)."""
    law = discrete_gaussian.loss_law(sigma=30.0, sensitivity=1)
    g = accountant.epsilon_bounds([(law, 50)], delta=1e-6)
    monkeypatch.setattr(refine, "stride", lambda parts, lattice: 1)
    plain = accountant.epsilon_bounds([(law, 50)], delta=1e-6)
    assert plain.lower <= g.lower <= g.upper <= plain.upper


def test_a_loss_zero_up_to_round_off_makes_no_lattice() -> None:
    """A Poisson-subsampled discrete Gaussian (σ = 1, Δ = 2, q = 0.005, add/remove) has the loss
    ln(1 − q + q e^0) = 0 computed as 8.7e-19: taken for the lattice's step, its other losses were
    10^19 steps, ``stride`` overflowed int64 (invalid cast; on the Mechanisms page an exception box
    under the test suite's warnings-as-errors, and the PLD route lost to "h must be coarse enough").
    No lattice now; the PLD interval overlaps the one at a width chosen by hand."""
    from dpviz.mechanisms import registry
    from dpviz.pld.lattice import LATTICE_STEPS_MAX

    law = registry.make("discrete-gaussian", sampling_rate=0.005, neighbouring="add-remove", sigma=1.0,
                        sensitivity=2.0).law
    assert 0 < np.abs(law.loss).min() < 1e-15  # the premise: a zero loss off by round-off
    lattice = common_lattice([(law, 2)])
    assert lattice is None or np.abs(law.loss).max() / lattice <= LATTICE_STEPS_MAX
    g = accountant.delta_bounds([(law, 2)], epsilon=2.0)
    ref = accountant.delta_bounds([(law, 2)], epsilon=2.0, h=1e-3)
    assert g.upper is not None and ref.upper is not None and g.lower is not None and ref.lower is not None
    assert g.lower <= ref.upper and ref.lower <= g.upper


def test_anchor_ignores_two_heaviest_atoms_closer_than_a_lattice_can_tell() -> None:
    """A subsampled discrete Gaussian (σ = 0.625, Δ = 5, q = 0.008, replace-one) has its two heaviest
    atoms 1.2e-9 apart among losses up to ±347: as the anchor that forced h = 1.2e-9, and the PLD
    route answered "not computed" (the Mechanisms page then showed Rényi DP's 338,886 for ε ≈ 731).
    The grid is now chosen as for a law without an anchor; the interval holds a fixed-width one."""
    from dpviz.pld.accountant import epsilon_bounds
    from dpviz.pld.lattice import anchor
    from dpviz.views import mechanisms as mv

    law = mv.make_mechanism("discrete-gaussian", {"sigma": 0.625, "sensitivity": 5, "sampling_rate": 0.008,
                                                  "neighbouring": "replace-one"}).law
    assert anchor([(law, 1250)]) is None
    g = epsilon_bounds([(law, 1250)], delta=1e-5)
    assert g.lower is not None and g.upper is not None
    assert (g.upper - g.lower) / g.upper <= 2e-4
    fixed = epsilon_bounds([(law, 1250)], delta=1e-5, h=1e-3)  # another grid: the intervals meet
    assert max(g.lower, fixed.lower) <= min(g.upper, fixed.upper)
