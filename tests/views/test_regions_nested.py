"""The nested optimal regions of the privacy-regions view (KOV Fig. 2; issue 10 item 6)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpviz.composition.levels import homogeneous
from dpviz.regions import method_region
from dpviz.validation import ParameterError
from dpviz.views.regions import MAX_OVERLAID, SPEC, check_ks


def test_ks_parse_sorted_without_repeats() -> None:
    assert check_ks("100, 1 3,3") == (1, 3, 100)
    assert check_ks([7, 2]) == (2, 7)
    assert check_ks("37") == (37,)  # any k, not only the slider's stops


TOO_MANY = ",".join(map(str, range(1, MAX_OVERLAID + 2)))


@pytest.mark.parametrize("bad", ["", "0", "x", "2000000", "1.5", TOO_MANY])
def test_ks_bad_input_names_the_field(bad: str) -> None:
    with pytest.raises(ParameterError, match="overlaid k values must be"):
        check_ks(bad)


def _p_md_at(p_fa: np.ndarray, vertices: dict) -> np.ndarray:
    return np.interp(p_fa, np.asarray(vertices["P_FA"]), np.asarray(vertices["P_MD"]))


def test_nested_regions_are_the_optimal_regions_and_nest() -> None:
    eps0, delta0, ks = 0.3, 1e-4, (1, 4, 16, 64)
    view = SPEC.build(eps0=eps0, delta0=delta0, k=16, ks=ks)
    fig = view.figures["nested"]
    outlines = [t for t in fig.data if t.name.startswith("k = ") and t.mode == "lines"]  # fills: no line
    names = [t.name for t in outlines]
    assert names == [f"k = {n}" for n in sorted(ks, reverse=True)]  # largest drawn first
    colours = [t.line.color for t in outlines]
    assert len(set(colours)) == len(ks)
    nested = view.payload["nested_optimal_vertices"]
    grid = np.linspace(0.0, 1.0, 401)
    for n in ks:  # each curve is the optimal region of n-fold composition, computed on its own
        own = method_region("optimal", homogeneous(k=n, eps0=eps0, delta0=delta0))
        np.testing.assert_allclose(nested[str(n)]["P_MD"], own.p_md)
    # composing more can only enlarge the region: its lower boundary is lower everywhere
    lows = [_p_md_at(grid, nested[str(n)]) for n in ks]
    for smaller_k, larger_k in itertools.pairwise(lows):
        assert np.all(larger_k <= smaller_k + 1e-12)
        assert np.any(larger_k < smaller_k - 1e-3)


def test_the_chosen_k_is_drawn_nested_as_its_own_region() -> None:
    """The nested regions are computed apart from the k-fold ones (the page caches the two parts
    apart, ``views.regions.nested``): the chosen k's nested region is its optimal region, exactly."""
    view = SPEC.build(eps0=0.1, delta0=0.0, k=30, ks=(30,))
    nested = view.payload["nested_optimal_vertices"]["30"]
    own = view.payload["lower_boundary_vertices"]["optimal"]
    assert np.array_equal(nested["P_FA"], own["P_FA"]) and np.array_equal(nested["P_MD"], own["P_MD"])
