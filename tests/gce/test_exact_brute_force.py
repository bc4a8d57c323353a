"""The exact GCE curve against brute-force enumeration (all 4^k outcomes, all b, k ≤ 5).

Covers every code path of ``dpviz.gce.exact``: the closed forms (0⃗, U(B∖{0⃗})), the
log-space recursion with only n_A = 0 classes (p0 = 0⃗, δ0 > 0), the full
(n_A, n_B, n_C) table (two composite priors), δ0 = 0, and explicit priors grouped by
column pattern — each in both directions of HBW Def. 3.
"""

from __future__ import annotations

import math

import pytest

from dpviz.gce import hypotheses as H
from dpviz.gce.exact import exact_pair
from tests import oracles as brute

# The code sums ≤ ~10^3 class terms in log space, the brute force ≤ 4^5 terms in linear
# space; both are exact up to rounding, so 1e-10 relative (+1e-14 absolute for values
# that are 0 on one side) is a wide margin that still catches any wrong term.
REL, ABS = 1e-10, 1e-14


def _cases():
    """(id, code p0, code p1, brute p0, brute p1) for k = 1..5."""
    out = []
    for k in (1, 2, 3, 5):
        out.append((f"zero-vs-nonzero-k{k}", H.point_zero(k=k), H.uniform_nonzero(k=k),
                    brute.zero(k), brute.nonzero(k)))
    for k, k2 in ((3, 2), (4, 1), (5, 3)):
        out.append((f"zero-vs-atleast{k2}-k{k}", H.point_zero(k=k), H.at_least(k=k, k2=k2),
                    brute.zero(k), brute.at_least(k, k2)))
        out.append((f"below-vs-atleast{k2}-k{k}", H.below(k=k, k2=k2), H.at_least(k=k, k2=k2),
                    brute.below(k, k2), brute.at_least(k, k2)))
    w0, w1 = [0.5, 0.2, 0.0, 0.3], [0.1, 0.0, 0.6, 0.3]
    out.append(("levels-vs-levels-k3", H.exchangeable(k=3, level_weights=w0),
                H.exchangeable(k=3, level_weights=w1), brute.by_level(3, w0), brute.by_level(3, w1)))
    out.append(("one-vs-nonzero-k4", H.point_one(k=4), H.uniform_nonzero(k=4),
                {(1,) * 4: 1.0}, brute.nonzero(4)))
    e0 = {(0, 0, 0): 0.2626954664163071, (1, 1, 0): 0.7373045335836929}
    e1 = {(1, 0, 0): 0.24898021653412578, (1, 1, 0): 0.7510197834658743}
    out.append(("explicit-composite-k3", H.explicit(list(e0.items())), H.explicit(list(e1.items())), e0, e1))
    f0 = {(0, 1, 1, 0): 0.3, (1, 1, 0, 0): 0.7}
    f1 = {(0, 0, 0, 1): 0.5, (1, 0, 1, 0): 0.25, (1, 1, 1, 1): 0.25}
    out.append(("explicit-composite-k4", H.explicit(list(f0.items())), H.explicit(list(f1.items())), f0, f1))
    out.append(("explicit-point-vs-point-k4", H.point((0, 1, 1, 0)), H.point((1, 1, 0, 0)),
                {(0, 1, 1, 0): 1.0}, {(1, 1, 0, 0): 1.0}))
    out.append(("exchangeable-as-explicit-k3", H.to_explicit(H.below(k=3, k2=2)),
                H.to_explicit(H.at_least(k=3, k2=2)), brute.below(3, 2), brute.at_least(3, 2)))
    return [pytest.param(*c[1:], id=c[0]) for c in out]


PARAMS = [pytest.param(0.5, 0.0, id="eps0.5-pure"), pytest.param(1.3, 1e-3, id="eps1.3-d1e-3"),
          pytest.param(0.2, 0.05, id="eps0.2-d0.05")]


@pytest.mark.parametrize(("eps0", "delta0"), PARAMS)
@pytest.mark.parametrize(("p0", "p1", "b0", "b1"), _cases())
def test_delta_both_directions_match_brute_force(p0, p1, b0, b1, eps0: float, delta0: float) -> None:
    pt, qt = brute.canonical(eps0, delta0)
    m0, m1 = brute.mixture(b0, pt, qt), brute.mixture(b1, pt, qt)
    pair = exact_pair(p0, p1, eps0=eps0, delta0=delta0)
    k = p0.k
    for eps in (0.0, 0.3 * eps0, eps0, 1.7 * eps0, k * eps0, k * eps0 + 1.0):
        fwd, rev = brute.hockey(m1, m0, eps), brute.hockey(m0, m1, eps)
        assert pair.delta_forward(eps) == pytest.approx(fwd, rel=REL, abs=ABS), f"forward ε={eps}"
        assert pair.delta_reverse(eps) == pytest.approx(rev, rel=REL, abs=ABS), f"reverse ε={eps}"
        assert pair.delta(eps) == pytest.approx(max(fwd, rev), rel=REL, abs=ABS)


@pytest.mark.parametrize(("eps0", "delta0"), PARAMS)
@pytest.mark.parametrize(("p0", "p1", "b0", "b1"), _cases())
def test_epsilon_for_delta_matches_brute_force(p0, p1, b0, b1, eps0: float, delta0: float) -> None:
    pt, qt = brute.canonical(eps0, delta0)
    m0, m1 = brute.mixture(b0, pt, qt), brute.mixture(b1, pt, qt)
    pair = exact_pair(p0, p1, eps0=eps0, delta0=delta0)
    two_sided = lambda e: max(brute.hockey(m1, m0, e), brute.hockey(m0, m1, e))  # noqa: E731
    for delta in (0.2, 0.06, 2.5e-3, 4e-4):  # none equal to an infinite-loss mass (a rounding tie)
        got = pair.epsilon(delta)
        if two_sided(200.0) > delta:  # only the infinite-loss mass is left: no ε works
            assert got is None
            continue
        want = brute.smallest_epsilon(two_sided, delta, hi=200.0)
        # bisection resolves ε to ~1e-12; the curve is piecewise exponential, so 1e-9 absolute
        assert got == pytest.approx(want, abs=1e-9), f"δ={delta}"


@pytest.mark.parametrize(("p0", "p1", "b0", "b1"), _cases()[:8])
def test_region_is_tangent_to_every_hockey_stick_line(p0, p1, b0, b1) -> None:
    """The region (hull of both directions, KOV §2) lies on or above every line
    P_MD = 1 − δ(ε) − e^ε P_FA and its mirror, with δ(ε) the two-sided brute-force value,
    and touches it: so it is exactly the region of the brute-force pair."""
    eps0, delta0 = 0.7, 1e-2
    pt, qt = brute.canonical(eps0, delta0)
    m0, m1 = brute.mixture(b0, pt, qt), brute.mixture(b1, pt, qt)
    region = exact_pair(p0, p1, eps0=eps0, delta0=delta0).region()
    x, y = region.p_fa, region.p_md
    for eps in (0.0, 0.4, 1.1, 2.5):
        d = max(brute.hockey(m1, m0, eps), brute.hockey(m0, m1, eps))
        # 1e-12: sums of ≤ 4^5 probabilities in two orders
        for line in (y + math.exp(eps) * x, x + math.exp(eps) * y):
            assert line.min() == pytest.approx(1 - d, abs=1e-12), f"ε={eps}"
