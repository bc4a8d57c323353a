"""Each method's δ-against-ε curve, made without a Guarantee per point (``DeltaCurve.bounds``, issue
20), is the curve ``DeltaCurve.pointwise`` makes of its points ``delta_for_epsilon``: every field
(values, kind, source, reason, which points are impossible), bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.composition import METHODS
from dpviz.composition.levels import Level, as_levels
from dpviz.guarantee import DeltaCurve

level = st.tuples(st.one_of(st.floats(1e-6, 12.0), st.just(0.0)),
                  st.sampled_from([0.0, 0.0, 1e-9, 1e-5, 1e-2]), st.integers(1, 3000))


def same_curve(a: DeltaCurve, b: DeltaCurve) -> bool:
    arrays = all(np.array_equal(getattr(a, f), getattr(b, f), equal_nan=True)
                 for f in ("epsilon", "lower", "upper", "impossible"))
    return arrays and (a.kind, a.source, a.reason) == (b.kind, b.source, b.reason)


@settings(max_examples=120)
@given(rows=st.lists(level, min_size=1, max_size=3), scale=st.floats(0.0, 2.5), n=st.integers(0, 40))
def test_each_curve_is_its_points(rows: list[tuple[float, float, int]], scale: float, n: int) -> None:
    """ε from 0 past Σε (where basic and KOV give Π-δ), below the drift (no δ: impossible), an ε of
    exactly Σε; one or several levels (KOV Thm 3.5's source), ε0 = 0 (advanced's root 0)."""
    levels = as_levels([Level(epsilon=e, delta=d, count=c) for e, d, c in rows])
    top = sum(e * c for e, _, c in rows)
    eps = np.concatenate([np.linspace(0.0, scale * top + 1e-12, n), [top]])
    for key, method in METHODS.items():
        curve = method.delta_curve(levels, eps)
        points = DeltaCurve.pointwise([method.delta_for_epsilon(levels, epsilon=float(e)) for e in eps], eps,
                                      source=curve.source)
        assert same_curve(curve, points), key


def test_the_curves_here_have_points_of_each_kind() -> None:
    """The settings above reach impossible points and joined zCDP sources (not a test that only
    ever sees one case)."""
    levels = as_levels([Level(epsilon=0.1, delta=1e-6, count=300)])
    eps = np.linspace(0.0, 31.5, 160)
    assert METHODS["advanced"].delta_curve(levels, eps).impossible.any()
    assert METHODS["basic"].delta_curve(levels, eps).reason is not None
    assert "; " in METHODS["zcdp"].delta_curve(levels, eps).source  # Remark 15 and Prop. 14 both used


def test_a_guarantee_keeps_floats_and_converts_the_rest() -> None:
    """``Guarantee`` skips converting a Python float (float(v) is v) and still converts numpy floats
    and integers to floats and refuses booleans and strings, and fills its bracket from the kind."""
    import pytest

    from dpviz.guarantee import Guarantee, Kind

    x = 0.1 + 0.2
    g = Guarantee(epsilon=x, delta=np.float64(1e-5), kind=Kind.EXACT, source="s")
    assert g.epsilon is x and type(g.delta) is float and (g.lower, g.upper) == (x, x)
    assert type(Guarantee(epsilon=3, delta=0.0, kind=Kind.UPPER, source="s").epsilon) is float
    lower = Guarantee(epsilon=1.0, delta=0.0, kind=Kind.LOWER, source="s")
    assert (lower.lower, lower.upper) == (1.0, None)
    for bad in (True, "1.0", np.array([1.0])):
        with pytest.raises(TypeError):
            Guarantee(epsilon=bad, delta=0.0, kind=Kind.UPPER, source="s")  # type: ignore[arg-type]
