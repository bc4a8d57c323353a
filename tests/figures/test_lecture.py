"""The lecture file (issue 20): ``dpviz figure regions|curves … --out x.html`` is one self-contained
page whose slider frames are the pages' own figures at each k (``views.*.at_k``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from dpviz import budget as budgets
from dpviz.cli import main
from dpviz.views import curves
from dpviz.views.lecture import lecture_figure, slider_ks

ARGS = ["--eps0", "0.5", "--delta0", "1e-6", "--delta", "1e-5", "--k", "5"]


def test_curves_lecture_is_one_self_contained_page(tmp_path: Path, capsys) -> None:
    out = tmp_path / "curves.html"
    assert main(["figure", "curves", *ARGS, "--out", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["figure"] == "delta_vs_epsilon" and result["k_values"] == slider_ks(5) == [1, 2, 3, 4, 5]
    html = out.read_text(encoding="utf-8")
    # plotly.js inside the page: no script, stylesheet or font is fetched from anywhere
    assert html.startswith("<!DOCTYPE html>") and "plotly.js v" in html and 'id="lecture"' in html
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", html)
    assert html.count('"method":"animate"') == 5 and '"prefix":"k = "' in html


def test_frames_match_the_page(tmp_path: Path) -> None:
    """Each frame's traces are ``curves.at_k``'s figure at that k, trace by trace."""
    values = {"eps0": 0.5, "delta0": 1e-6, "delta": 1e-5, "k": 5}
    which, fig = lecture_figure("curves", values, which=None, budget=budgets.CLI)
    assert which == "delta_vs_epsilon" and [f.name for f in fig.frames] == ["1", "2", "3", "4", "5"]
    for frame in fig.frames:
        want = curves.at_k(**{**values, "k": int(frame.name)}).figure
        assert frame.layout.title.text == want.layout.title.text
        for got, ref in zip(frame.data, want.data, strict=False):
            assert got.name == ref.name
            np.testing.assert_array_equal(np.asarray(got.y, dtype=float), np.asarray(ref.y, dtype=float))


@pytest.mark.parametrize(("argv", "field"), [
    (["figure", "priors", "--out", "x.html"], "out"),
    (["figure", "regions", "--eps0", "0.5", "--k", "3", "--which", "nested", "--out", "x.html"], "which"),
])
def test_a_lecture_of_what_has_no_k_is_refused_naming_the_flag(argv, field, tmp_path, capsys,
                                                               monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f": error: {field} must be " in err and ".html lecture" in err
    assert not (tmp_path / "x.html").exists()
