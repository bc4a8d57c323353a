"""The privacy-loss histogram of the Mechanisms page: at most ``MAX_BARS`` bars, merged for display
only, mass-preserving (issue 8: 20,000–40,000 bars, 0.5 MB of JSON, seconds to draw)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.figures.mechanisms import MAX_BARS, pld_histogram_figure, rebin
from tests.app.helpers import assert_clean, figures, run_page

PAGE = "pages/4_Mechanisms.py"


def _grid(n: int, h: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    losses = (np.arange(n) - n // 3) * h
    mass = np.exp(-((losses / (n * h / 8)) ** 2))
    mass[3::7] = 0.0  # empty cells inside the support
    return losses, mass / mass.sum()


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 50_000), bars=st.integers(1, 3000))
def test_rebin_preserves_mass_and_mean_and_caps_bars(n, bars):
    losses, mass = _grid(n)
    left, right, merged, mean, cells = rebin(losses, mass, max_bars=bars)
    assert merged.size <= bars
    assert merged.sum() == pytest.approx(mass.sum(), rel=1e-12)
    assert (merged * mean).sum() == pytest.approx((mass * losses).sum(), abs=1e-12)
    assert np.all(left[1:] >= right[:-1] - 1e-12)  # bars do not overlap
    assert np.all((mean >= left) & (mean <= right))  # each bar's mean lies inside it
    if n <= bars:
        assert cells == 1  # nothing merged when the grid fits


def test_fine_grid_is_drawn_with_at_most_max_bars():
    losses, mass = _grid(40_001)
    fig = pld_histogram_figure(losses, mass, p_inf=1e-9, title="t")
    bar = fig.data[0]
    assert len(bar.x) <= MAX_BARS
    assert float(np.sum(bar.y)) == pytest.approx(1.0, rel=1e-12)
    assert "display" in bar.name and "merged" in bar.hovertemplate
    assert len(fig.to_json()) < 200_000  # was 0.5 MB


def test_coarse_grid_is_drawn_cell_by_cell():
    losses, mass = _grid(500)
    bar = pld_histogram_figure(losses, mass, p_inf=0.0, title="t").data[0]
    assert len(bar.x) == np.count_nonzero(mass)
    np.testing.assert_allclose(np.sort(bar.y), np.sort(mass[mass > 0]))


@pytest.mark.parametrize("params", [{}, {"sigma": "0.9", "mech_k": "10000"}])
def test_page_histogram_bar_count(params):
    at = run_page(PAGE, **params)
    assert_clean(at)
    hist = figures(at)[0]
    assert hist["data"][0]["type"] == "bar"
    n = hist["data"][0]["x"]
    count = len(n) if isinstance(n, list) else len(np.frombuffer(__import__("base64").b64decode(n["bdata"]),
                                                                   dtype=n["dtype"]))
    assert 0 < count <= MAX_BARS
