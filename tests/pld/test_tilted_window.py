"""The tilted window (``power.compose_power``, docs/MATH.md §17.2): its edges sit where the tilted
measure's mass beyond them is share·e^{θΛ′(θ) − Λ(θ)}/``ALIAS_SHRINK``, inside the untilted window's
bulk, and everything outside is moved the sound way or charged. Checked against exact compositions in
Python integers (7 + 3 factors, masses exact binary fractions summing to about 1) at tails that cut
the window: the pessimistic grid's δ is never below the exact δ, the optimistic grid's never above."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpviz.pld import power
from dpviz.pld.grid import GridPLD
from tests.pld.test_power import _exact_delta, _exact_power, _integer_grid


def _case() -> tuple[list[tuple[np.ndarray, int, int]], list[float], np.ndarray]:
    a, b = _integer_grid(300, 1), _integer_grid(260, 2)
    parts = [(a, 7, int(a.sum()).bit_length()), (b, 3, int(b.sum()).bit_length())]
    exact_ints, _ = _exact_power([(ints, k) for ints, k, _ in parts])
    scale = 2.0 ** -sum(k * bits for _, k, bits in parts)
    losses = (sum(-100 * k for _, k, _ in parts) + np.arange(len(exact_ints))) * 0.01
    return parts, [v * scale for v in exact_ints], losses


@pytest.mark.parametrize("pessimistic", [True, False])
@pytest.mark.parametrize("tail", [1e-9, 1e-6])
@pytest.mark.parametrize("tilt_at", [1.0, 2.0, 3.0])
def test_tilted_window_is_sound_against_exact_compositions(pessimistic: bool, tail: float,
                                                           tilt_at: float) -> None:
    parts, exact, losses = _case()
    grids = [(GridPLD(h=0.01, lo=-100, mass=ints * 2.0**-bits, p_inf=0.0, pessimistic=pessimistic), k)
             for ints, k, bits in parts]
    got = power.compose_power(grids, tail=tail, tilt_at=tilt_at)
    assert got.tilt > 0 and got.mass.size < len(exact) // 2  # tilted, and the window cuts the support
    for eps in np.linspace(-3.0, tilt_at + 1.0, 41):  # below the window too: δ at every ε
        truth = _exact_delta(exact, losses, float(eps))
        d = got.delta(float(eps))
        assert (d >= truth) if pessimistic else (d <= truth), (float(eps), d, truth)


def test_tilted_edges_sit_inside_the_untilted_ones() -> None:
    """At δ ≈ 1e-4 the tilted measure's window is narrower than with the untilted share (the slack
    e^{θΛ′(θ) − Λ(θ)} is large): fewer bins, every charge computed at the edges used."""
    parts, _exact, _losses = _case()
    grids = [(GridPLD(h=0.01, lo=-100, mass=ints * 2.0**-bits, p_inf=0.0, pessimistic=True), k)
             for ints, k, bits in parts]
    wide = power.compose_power(grids, tail=1e-9, tilt_at=2.0)
    old = power.ALIAS_SHRINK
    try:
        power.ALIAS_SHRINK = math.inf  # the slack clipped to 0: the tilted share is the untilted one
        plain = power.compose_power(grids, tail=1e-9, tilt_at=2.0)
    finally:
        power.ALIAS_SHRINK = old
    assert wide.mass.size < plain.mass.size
