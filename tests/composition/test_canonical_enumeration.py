"""Classic composition methods against brute-force enumeration of canonical pairs.

Edge cases the existing tests do not combine: ε = 0 rows with δ > 0, huge ε0 next to small
ones, three distinct levels, δ close to 1, and every bound checked against the exact optimum.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpviz.composition import METHODS, optimal
from dpviz.composition.levels import Level, as_levels, homogeneous
from tests import oracles

HETERO = [
    [Level(0.0, 0.1, 2), Level(1.0, 0.0, 2)],
    [Level(0.0, 0.0, 3), Level(0.5, 1e-3, 2)],
    [Level(0.3, 0.0, 2), Level(0.6, 0.0, 1), Level(0.9, 0.01, 1)],
    [Level(2.0, 0.2, 1), Level(0.1, 0.0, 3)],
    [Level(50.0, 1e-6, 2), Level(0.5, 0.0, 2)],
    [Level(0.0, 0.5, 1), Level(0.0, 0.3, 2)],
    [Level(1.0, 0.0, 1), Level(1.0, 0.1, 1)],
]


def _brute(levels):
    return oracles.canonical_product([(lv.epsilon, lv.delta) for lv in levels for _ in range(lv.count)])


def _row_id(rows) -> str:
    return ",".join(f"{x.epsilon}:{x.delta}:{x.count}" for x in rows)


@pytest.mark.parametrize("rows", HETERO, ids=_row_id)
def test_exact_heterogeneous_matches_enumeration(rows) -> None:
    levels = as_levels(rows)
    p, q = _brute(levels)
    # atom points (0.3, 0.6, 0.9, 1.5, 2.0, 50, 101) on purpose: δ is evaluated exactly at kinks
    for eps in (0.0, 0.1, 0.3, 0.5, 0.6, 0.9, 1.0, 1.5, 2.0, 2.2, 3.0, 50.0, 100.5, 101.0):
        got = METHODS["optimal"].delta_for_epsilon(levels, epsilon=eps).delta
        # 1e-12 absolute + 1e-9 relative: ≤ 4^6 linear-space terms vs log-space atom sums
        assert got == pytest.approx(oracles.hockey(p, q, eps), rel=1e-9, abs=1e-12)
    for d in (1e-9, 1e-6, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9):
        g = METHODS["optimal"].epsilon_for_delta(levels, delta=d)
        want = oracles.smallest_eps(p, q, d)
        if want is None:
            assert not g.feasible
        else:
            # 1e-8: the brute-force bisection stops at ~1e-13 of 300; ε is exact to round-off
            assert g.epsilon == pytest.approx(want, rel=1e-8, abs=1e-8)


@pytest.mark.parametrize("seed", range(4))
def test_bounds_never_below_exact(seed: int) -> None:
    """basic, advanced and KOV Thm 3.4/3.5 against the exact optimum, random levels."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        rows = [Level(float(rng.choice([0.0, 0.01, 0.2, 1.0, 3.0, 20.0])),
                      float(rng.choice([0.0, 1e-8, 1e-3, 0.1])), int(rng.integers(1, 30)))
                for _ in range(int(rng.integers(1, 4)))]
        levels = as_levels(rows)
        for d in (1e-10, 1e-5, 1e-2, 0.3, 0.9):
            ex = METHODS["optimal"].epsilon_for_delta(levels, delta=d)
            for m in ("basic", "advanced", "kov"):
                g = METHODS[m].epsilon_for_delta(levels, delta=d)
                if g.feasible:
                    assert ex.feasible
                    # 1e-9 relative: the exact ε is rounded up by design, bounds are closed forms
                    assert g.epsilon >= ex.epsilon - 1e-9 * max(1.0, ex.epsilon)
        for e in (0.0, 0.1, 1.0, 5.0, 30.0):
            ex_d = METHODS["optimal"].delta_for_epsilon(levels, epsilon=e).delta
            for m in ("basic", "advanced", "kov"):
                g = METHODS[m].delta_for_epsilon(levels, epsilon=e)
                if g.feasible:
                    # 1e-11 absolute: the exact δ rounds each loss one ulp outward, which adds up
                    # to ~|L|·2^-52 ≈ 2e-12 at L = 10^4 (kε0 with ε0 = 50)
                    assert g.delta >= ex_d * (1 - 1e-9) - 1e-11


@pytest.mark.parametrize("k", [1, 2, 7, 1000, 100_000])
@pytest.mark.parametrize("eps0", [1e-6, 0.05, 2.0, 100.0])
@pytest.mark.parametrize("delta0", [0.0, 1e-300, 1e-4, 0.3])
def test_epsilon_is_sound_and_minimal(k: int, eps0: float, delta0: float) -> None:
    levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
    atoms = optimal.loss_atoms(levels)
    for d in (1e-300, 1e-15, 1e-6, 0.5, 1 - 1e-12):
        g = optimal.epsilon_for_delta(levels, delta=d)
        if not g.feasible:
            assert d < atoms.p_inf * (1 + 1e-12)  # 1e-12: p_inf = −expm1(k log1p(−δ0)) rounding
            continue
        assert atoms.delta(g.epsilon) <= d * (1 + 1e-12)  # 1e-12: documented relative error bound
        if g.epsilon > 0:
            below = max(g.epsilon * (1 - 1e-9) - 1e-12, 0.0)
            assert atoms.delta(below) > d * (1 - 1e-9)  # minimal up to 1e-9 relative
