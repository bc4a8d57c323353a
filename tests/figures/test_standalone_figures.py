"""An exported figure stands alone (issue 21): its title names what the file name carries (the
composed (ε0, δ0), the mechanism), and a log k axis labels its ticks in full (a figure ending at
k = 500 read "5")."""

from __future__ import annotations

import math

import pytest

from dpviz.figures.style import log_tick_text, log_ticks
from dpviz.views import curves as cv
from dpviz.views.mechanisms import SPEC as MECHANISMS


def _curves(**over):
    return cv.SPEC.build(**{**cv.SPEC.defaults(), **over})


def test_curve_titles_name_the_composed_mechanisms():
    view = _curves(eps0=0.25, delta0=1e-6, k_max=500)
    for name in ("epsilon_vs_k", "delta_vs_epsilon"):
        title = view.figures[name].layout.title.text.replace("<br>", " ")
        assert "(0.25, 1e-06)-DP mechanisms" in title, (name, title)


def test_a_log_k_axis_labels_its_last_tick_in_full():
    axis = _curves(k_max=500).figures["epsilon_vs_k"].layout.xaxis
    assert axis.type == "log"
    assert list(axis.ticktext)[-1] == "500" and list(axis.tickvals)[-1] == 500
    assert dict(zip(axis.tickvals, axis.ticktext, strict=True))[200] == "200"  # not "2"


@pytest.mark.parametrize("lo,hi", [(1, 500), (1, 1000), (1, 10**6), (0.001, 10), (3, 7)])
def test_log_ticks_lie_in_range_and_read_as_their_value(lo, hi):
    ticks, text = log_ticks(lo, hi)
    assert ticks and all(lo <= t <= hi for t in ticks)
    for t, label in zip(ticks, text, strict=True):
        if label.startswith("10") and not label.replace(",", "").isdecimal():  # 10⁶
            exponent = int(label[2:].translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
            assert math.isclose(10.0 ** exponent, t)
        else:
            assert math.isclose(float(label.replace(",", "")), t), (t, label)
    assert log_tick_text(2e5) == "200,000"


def test_mechanism_figures_name_the_mechanism():
    values = {**MECHANISMS.defaults(), "k": 50}
    view = MECHANISMS.build(**values)
    name = view.figures["histogram"].layout.title.text.split(": ", 1)[1].replace("<br>", " ")
    for key in ("delta", "region", "epsilon_vs_k"):
        title = view.figures[key].layout.title.text.replace("<br>", " ")
        assert name in title, (key, title, name)
