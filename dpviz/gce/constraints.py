"""Membership constraints (HBW §V-A) and the comparison with parallel composition (§V-A1).

The worst case over hypotheses restricted to a set B~ of allowed membership vectors is
attained at point masses (HBW §IV-A / Thm 1 proof), and a pair of point masses
(b0, b1) only needs the d = |b0 ⊕ b1| mechanisms where they differ. With k
homogeneous (ε0, δ0) mechanisms everything reduces to d:

* unbounded DP (p0 = 0⃗, HBW Ex. 1): d = max_{b ∈ B~} |b|; a cap of c databases gives c;
* bounded DP (both sides in B~): d = max_{b, b' ∈ B~} |b ⊕ b'|; a cap c gives min(2c, k);
* one subsidiary per employee (HBW Ex. 2): the cap c = 1;
* free vs paid feature columns (HBW Ex. 3): B~ = {free user, paid user, 0⃗}.

Then CompGuarantee(d mechanisms) by any method; optimal composition of d is the exact
worst case. Parallel composition (McSherry, HBW Thm 2 with Def. 5) gives d·ε0 and
needs δ0 = 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

import numpy as np

from dpviz.budget import Budget
from dpviz.composition import METHODS, homogeneous
from dpviz.guarantee import Guarantee, Kind
from dpviz.validation import ParameterError, check_count, check_delta, check_epsilon

Neighbouring = Literal["unbounded", "bounded"]
NEIGHBOURING = ("unbounded", "bounded")

SOURCE_CAP = "HBW §V-A Ex. 1-3"
SOURCE_PARALLEL = "Parallel composition (McSherry; HBW §V-A1, Thm 2 + Def. 5)"


def check_neighbouring(value: object) -> Neighbouring:
    if value not in NEIGHBOURING:
        raise ParameterError("neighbouring", value, "unbounded or bounded")
    return value  # type: ignore[return-value]


def compositions_for_cap(*, k: int, cap: int, neighbouring: Neighbouring) -> int:
    """d for "in at most ``cap`` of the k databases": min(c, k) unbounded, min(2c, k) bounded.
    A cap above k is no constraint (d = k), e.g. 365 nights but only 200 hospitals."""
    k = check_count(k, field="k")
    cap = check_count(cap, field="cap")
    return min(cap if check_neighbouring(neighbouring) == "unbounded" else 2 * cap, k)


def compositions_for_allowed(allowed: Sequence[Sequence[int]], *, neighbouring: Neighbouring) -> int:
    """d for an allowed set B~: max |b| (unbounded, against 0⃗) or max |b ⊕ b'| (bounded)."""
    check_neighbouring(neighbouring)
    if not allowed:
        raise ParameterError("allowed", "[]", "a non-empty list of membership vectors")
    bits = np.asarray([[int(x) for x in b] for b in allowed])
    if bits.ndim != 2 or not np.isin(bits, (0, 1)).all():
        raise ParameterError("allowed", allowed[:3], "vectors of equal length with entries 0 or 1")
    if neighbouring == "unbounded":
        return int(bits.sum(axis=1).max())
    return hamming_diameter(bits, bits)


HAMMING_K_MAX = 20
"""Longest vectors the cube method of ``hamming_diameter`` takes (a table of 2^k distances: 8 MiB at
k = 20); longer vectors (HBW Ex. 3's feature columns, a few vectors of any length) are compared in
pairs."""

PAIR_CHUNK = 1 << 20
"""Pair distances held at once by the pairwise method of ``hamming_diameter`` (8 MiB)."""


def hamming_diameter(a: np.ndarray, b: np.ndarray) -> int:
    """max |x ⊕ y| over the rows x of ``a`` and y of ``b`` (vectors of one length k ≥ 1).

    For k ≤ ``HAMMING_K_MAX``: |x ⊕ y| = k − |x̄ ⊕ y|, so the answer is k − min over x of dist(x̄, b):
    the distance from every vector of the cube to the set b, one pass per coordinate (a Hamming
    distance is a sum over coordinates, so relaxing along each axis once is exact). Time
    O(k·2^k + |a| + |b|): all pairs (|a|·|b|·k) took 99 s and 1.36 GB for 7,200 vectors of 16 bits
    (issue 22). Longer vectors: every pair, |x ⊕ y| = |x| + |y| − 2 x·y, in chunks of rows of
    ``a`` (the typed sets are at most 16 bits long: only a few long vectors come here)."""
    k = a.shape[1]
    if b.shape[1] != k or k < 1:
        raise ParameterError("vectors", f"lengths {a.shape[1]} and {b.shape[1]}", "vectors of one length ≥ 1")
    if k > HAMMING_K_MAX:
        return _pairwise_diameter(a.astype(np.int64), b.astype(np.int64))
    weights = 1 << np.arange(k - 1, -1, -1)
    codes_a, codes_b = a.astype(np.int64) @ weights, b.astype(np.int64) @ weights
    cube = np.arange(1 << k)
    dist = np.full(1 << k, k + 1, dtype=np.int64)
    dist[codes_b] = 0
    for bit in weights:
        np.minimum(dist, dist[cube ^ bit] + 1, out=dist)
    return int(k - dist[codes_a ^ ((1 << k) - 1)].min())


def _pairwise_diameter(a: np.ndarray, b: np.ndarray) -> int:
    """max |x ⊕ y| over all pairs of rows, exactly (integer arithmetic), at most ``PAIR_CHUNK``
    distances at a time."""
    weight_b = b.sum(axis=1)
    rows = max(1, PAIR_CHUNK // max(1, b.shape[0]))
    best = 0
    for start in range(0, a.shape[0], rows):
        x = a[start:start + rows]
        dist = x.sum(axis=1)[:, None] + weight_b[None, :] - 2 * (x @ b.T)
        best = max(best, int(dist.max()))
    return best


def feature_columns(*, common: int, free_only: int, paid_only: int) -> tuple[tuple[int, ...], ...]:
    """HBW Ex. 3: columns 1..k1 common, then ads (free users only), then premium (paid only).
    Returns the allowed vectors (free user, paid user, 0⃗)."""
    k1 = check_count(common, field="common", minimum=0)
    fa = check_count(free_only, field="free_only", minimum=0)
    pa = check_count(paid_only, field="paid_only", minimum=0)
    if k1 + fa + pa < 1:
        raise ParameterError("columns", 0, "at least one feature column")
    free = (1,) * k1 + (1,) * fa + (0,) * pa
    paid = (1,) * k1 + (0,) * fa + (1,) * pa
    return free, paid, (0,) * (k1 + fa + pa)


EX3_PAIRS: dict[str, tuple[int, int]] = {"c¹ vs c²": (0, 1), "c¹ vs 0⃗": (0, 2), "c² vs 0⃗": (1, 2)}
"""HBW Ex. 3's pairs of allowed vectors (c¹ free user, c² paid user, c³ = 0⃗), as indices into
:func:`feature_columns`."""
PAPER_EX3_PAIRS: dict[str, tuple[str, ...]] = {"unbounded": ("c¹ vs c²", "c¹ vs 0⃗"),
                                               "bounded": ("c¹ vs c²", "c¹ vs 0⃗", "c² vs 0⃗")}
"""The pairs HBW Ex. 3 composes, as printed: unbounded takes c¹ vs c² and c¹ vs c³ (docs/MATH.md §20)."""
DEF3_EX3_PAIRS: dict[str, tuple[str, ...]] = {"unbounded": ("c¹ vs 0⃗", "c² vs 0⃗"),
                                              "bounded": ("c¹ vs c²", "c¹ vs 0⃗", "c² vs 0⃗")}
"""The pairs HBW Def. 3 needs: unbounded compares 0⃗ with each allowed b (Ex. 1's p0 = 0⃗)."""


def feature_pair_sizes(*, common: int, free_only: int, paid_only: int) -> dict[str, int]:
    """|b ⊕ b'| for each pair of HBW Ex. 3's vectors, counted on the vectors: a + p, k1 + a, k1 + p."""
    vectors = np.asarray(feature_columns(common=common, free_only=free_only, paid_only=paid_only))
    return {name: int((vectors[i] != vectors[j]).sum()) for name, (i, j) in EX3_PAIRS.items()}


def paper_feature_compositions(*, common: int, free_only: int, paid_only: int,
                               neighbouring: Neighbouring) -> int:
    """The number of mechanisms HBW Ex. 3's printed formula composes: the largest of its pairs
    (unbounded: max(a + p, k1 + a), where Def. 3 needs max(k1 + a, k1 + p); docs/MATH.md §20)."""
    sizes = feature_pair_sizes(common=common, free_only=free_only, paid_only=paid_only)
    return max(sizes[name] for name in PAPER_EX3_PAIRS[check_neighbouring(neighbouring)])


def feature_compositions(*, common: int, free_only: int, paid_only: int, neighbouring: Neighbouring) -> int:
    """d for HBW Ex. 3 in closed form: max(k1 + a, k1 + p) unbounded; also a + p bounded."""
    check_neighbouring(neighbouring)
    d = common + max(free_only, paid_only)
    return d if neighbouring == "unbounded" else max(d, free_only + paid_only)


def composed_bounds(*, d: int, eps0: float, delta0: float, delta: float,
                    context: str = SOURCE_CAP, budget: Budget | None = None) -> dict[str, Guarantee]:
    """Every classic method applied to the d mechanisms that remain (optimal = exact; over
    ``budget`` it shows the best closed form as an upper bound, with the reason)."""
    return {key: composed_bound(key, d=d, eps0=eps0, delta0=delta0, delta=delta, context=context,
                                budget=budget) for key in METHODS}


def composed_bound(method: str, *, d: int, eps0: float, delta0: float, delta: float,
                   context: str = SOURCE_CAP, budget: Budget | None = None) -> Guarantee:
    """``composed_bounds(…)[method]``, the one method computed: an ε-against-k series asks only
    for the optimum at every k, and the four closed forms beside it were a fifth of its time
    (issue 20)."""
    eps0 = check_epsilon(eps0, field="eps0")
    delta0 = check_delta(delta0, field="delta0")
    delta = check_delta(delta, field="delta")
    if d == 0:
        return Guarantee(epsilon=0.0, delta=0.0, kind=Kind.EXACT, source=f"{context}: no mechanism can tell")
    g = METHODS[method].epsilon_for_delta(homogeneous(k=d, eps0=eps0, delta0=delta0), delta=delta,
                                          budget=budget)
    return replace(g, source=f"{context} with {d} of the mechanisms: {g.source}",
                   note=(g.reason or "") if g.feasible else "")


def parallel_composition(*, d: int, eps0: float, delta0: float) -> Guarantee:
    """HBW §V-A1: symmetric difference d between the merged databases, so d·ε0 (pure DP only)."""
    if delta0 > 0:
        return Guarantee.impossible(source=SOURCE_PARALLEL,
                          reason="parallel composition covers ε-DP mechanisms only (δ0 must be 0)")
    return Guarantee(epsilon=d * eps0, delta=0.0, kind=Kind.UPPER, source=SOURCE_PARALLEL)
