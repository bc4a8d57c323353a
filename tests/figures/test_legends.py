"""Legends are never clipped: every figure of every view, exported to SVG at a phone's width
(390 px) up to 1920 px, shows every legend label in full, inside the image, below the x-axis
title (issue 10 item 5). Rendered by the same queue and Chromium as the page's SVG button."""

from __future__ import annotations

import shutil

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


def _distinct_figures():
    """One figure per (legend labels, height): the legend's layout depends on nothing else."""
    seen: dict[tuple, tuple[str, str]] = {}
    for case in CASES:
        for name, fig in view(*case).figures.items():
            seen.setdefault((_legend_names(fig), fig.layout.height), (case, name))
    return list(seen.values())


FIGURES = _distinct_figures()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("case,name", FIGURES, ids=[f"{case_id(c)}:{n}" for c, n in FIGURES])
def test_every_legend_label_is_drawn_in_full_inside_the_image(case, name, width):
    fig = view(*case).figures[name]
    legend = read_legend(render(fig, fmt="svg", width=width))
    want = sorted(n.replace("<br>", "") for n in _legend_names(fig))  # a wrapped label: one line each
    assert sorted(item.text for item in legend.items) == want
    left, top, right, bottom = legend.clip
    for item in legend.items:
        where = (f"{item.text!r} at x ∈ [{item.left:.1f}, {item.right:.1f}], "
                 f"y ∈ [{item.top:.1f}, {item.bottom:.1f}]")
        assert item.left >= -TOLERANCE and item.right <= legend.width + TOLERANCE, f"{where}: off the image"
        assert item.bottom <= legend.height + TOLERANCE, f"{where}: below the image"
        assert left - TOLERANCE <= item.left and item.right <= right + TOLERANCE, f"{where}: clipped"
        assert top - TOLERANCE <= item.top and item.bottom <= bottom + TOLERANCE, f"{where}: scrolled away"
        if legend.x_title_bottom is not None:
            assert item.top >= legend.x_title_bottom - TOLERANCE, f"{where}: over the x-axis title"
