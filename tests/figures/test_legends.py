"""Legends are never clipped: every figure of every view, exported to SVG at a phone's width
(390 px) up to 1920 px, shows every legend label in full, inside the image, below the x-axis
title (issue 10 item 5). Rendered by the same queue and Chromium as the page's SVG button."""

from __future__ import annotations

import shutil
from functools import cache

import numpy as np
import plotly.graph_objects as go
import pytest

from dpviz.cli.figure import render
from tests.export.cases import CASES, case_id, view
from tests.figures.svg_check import read_legend

WIDTHS = (390, 800, 1000, 1920)
TOLERANCE = 0.5  # px: Plotly rounds positions to tenths

pytestmark = pytest.mark.skipif(shutil.which("chromium") is None and shutil.which("chromium-browser") is None,
                                reason="Debian's chromium is installed by scripts/test.sh")


def _legend_names(fig) -> tuple[str, ...]:
    return tuple(t.name for t in fig.data if t.showlegend is not False and t.name)


@cache
def _distinct_figures() -> tuple[tuple[str, object], ...]:
    """One figure per (legend labels, height): the legend's layout depends on nothing else."""
    seen: dict[tuple, tuple[str, object]] = {}
    for case in CASES:
        for name, fig in view(*case).figures.items():
            seen.setdefault((_legend_names(fig), fig.layout.height), (f"{case_id(case)}:{name}", fig))
    return tuple(seen.values())


@pytest.mark.parametrize("width", WIDTHS)
def test_every_legend_label_is_drawn_in_full_inside_the_image(width):
    for label, fig in _distinct_figures():
        _check_legend(label, fig, width)


def _light(fig: go.Figure, points: int = 400) -> go.Figure:
    """The figure with long traces thinned to about ``points`` points (first and last kept): the
    legend's layout does not depend on the data, and 20,000 histogram bars take seconds to draw."""
    out = go.Figure(fig)
    for trace in out.data:
        n = len(trace.x) if trace.x is not None else 0
        if n > points:
            keep = np.unique(np.r_[np.arange(0, n, n // points), n - 1])
            trace.x, trace.y = np.asarray(trace.x)[keep], np.asarray(trace.y)[keep]
    return out


def _check_legend(label: str, fig, width: int) -> None:
    legend = read_legend(render(_light(fig), fmt="svg", width=width))
    want = sorted(n.replace("<br>", "") for n in _legend_names(fig))  # a wrapped label: one line each
    assert sorted(item.text for item in legend.items) == want, label
    left, top, right, bottom = legend.clip
    for item in legend.items:
        where = (f"{label} at {width} px: {item.text!r} at x ∈ [{item.left:.1f}, {item.right:.1f}], "
                 f"y ∈ [{item.top:.1f}, {item.bottom:.1f}]")
        assert item.left >= -TOLERANCE and item.right <= legend.width + TOLERANCE, f"{where}: off the image"
        assert item.bottom <= legend.height + TOLERANCE, f"{where}: below the image"
        assert left - TOLERANCE <= item.left and item.right <= right + TOLERANCE, f"{where}: clipped"
        assert top - TOLERANCE <= item.top and item.bottom <= bottom + TOLERANCE, f"{where}: scrolled away"
        if legend.x_title_bottom is not None:
            assert item.top >= legend.x_title_bottom - TOLERANCE, f"{where}: over the x-axis title"
