"""One engine (issue 19): for inputs drawn from each page's declared ranges (seeded, not fixed
points), the page's headline, the command line's answer and the exported view's value are one
number. The page side runs in ``streamlit.testing.v1.AppTest``; inputs are kept cheap (small k,
no subsampling) so that 50 draws per page stay affordable. The draws come in ``CHUNKS`` tests of
their own seeds, which the test workers share out: one test of all 50 planner draws ran 100 s and
could end the suite alone."""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest

from dpviz import budget as budgets
from dpviz.cli import main
from dpviz.figures.tables import format_number
from dpviz.mechanisms.registry import MECHANISMS
from dpviz.views import mechanisms as mv
from dpviz.views import planner as pv
from tests.app.helpers import assert_clean, errors, run_page, tables

DRAWS = 50
CHUNKS = 5
HEADLINE = re.compile(r"ε (?:≤|=) \*\*([^*]+)\*\*|ε ∈ \[\*\*[^*]+\*\*, \*\*([^*]+)\*\*\]")


def _cli(*argv: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0, argv
    return json.loads(out.getvalue())


def _draw(rng: np.random.Generator, span: tuple[float, float], whole: bool) -> str:
    lo, hi = span
    x = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    return str(round(x)) if whole else f"{x:.4g}"


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_mechanisms_page_cli_and_export_agree_on_drawn_inputs(chunk: int) -> None:
    rng = np.random.default_rng((1919, chunk))
    kinds = [key for key, cls in MECHANISMS.items() if cls.noise is not None]
    for _ in range(DRAWS // CHUNKS):
        kind = str(rng.choice(kinds))
        cls = MECHANISMS[kind]
        own = {p.key: _draw(rng, p.span, isinstance(p.default, int)) for p in cls.params if p.span}
        k = str(int(rng.integers(1, 12)))
        delta = f"{math.exp(rng.uniform(math.log(1e-9), math.log(1e-2))):.3g}"
        at = run_page("pages/4_Mechanisms.py", mechanism=kind, k=k, delta=delta, sampling_rate="1", **own)
        assert_clean(at)
        assert not errors(at), (kind, own, errors(at))
        shown = next(m for g in (HEADLINE.search(x.value) for x in at.markdown) if g for m in g.groups() if m)
        flags = [s for key, v in own.items() for s in (f"--{key}", v)]
        cli = _cli("mechanism", kind, *flags, "--k", k, "--delta", delta, "--budget", "2")
        values = {p.key: p.check(own[p.key]) for p in cls.params if p.key in own}
        # the export's payload (``figure mechanisms``: build_view → build → refine), without its figures
        export = mv.refine(mv.make_mechanism(kind, values), k=int(k), delta=float(delta),
                           budget=budgets.PAGE).payload["best"]["upper"]
        assert shown == format_number(cli["epsilon"]) == format_number(export), (kind, own, k, delta)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_planner_page_cli_and_export_agree_on_drawn_inputs(chunk: int) -> None:
    """The largest ε0 per method and the smallest Gaussian σ: page cell == ``plan eps0`` /
    ``plan noise gaussian`` (with the page's budgets) == the exported view's value. The figure
    is drawn for k ≤ 1 only (``k_max``): its series, searched again per k, are not compared here."""
    rng = np.random.default_rng((919, chunk))
    for _ in range(DRAWS // CHUNKS):
        eps = f"{math.exp(rng.uniform(math.log(0.1), math.log(10.0))):.3g}"
        delta = f"{math.exp(rng.uniform(math.log(1e-9), math.log(1e-3))):.3g}"
        k = str(int(rng.integers(1, 200)))
        at = run_page("pages/5_Plan_a_budget.py", epsilon=eps, delta=delta, k=k, k_max="1")
        assert_clean(at)
        eps0_table, _, noise_table, _ = tables(at)
        cli = _cli("plan", "eps0", "--epsilon", eps, "--delta", delta, "--k", k, "--budget", "2")
        sigma = _cli("plan", "noise", "gaussian", "--epsilon", eps, "--delta", delta, "--k", k,
                     "--budget", str(budgets.PAGE_SEARCH.seconds))["sigma"]
        view = pv.build(epsilon=float(eps), delta=float(delta), k=int(k), delta0=0.0, eps0=0.01,
                        sensitivity=1.0, sampling_rate=1.0, cap=10, k_max=1, budget=budgets.PAGE)
        for method, cell in zip(pv.METHODS, eps0_table["largest ε0"], strict=True):
            value = cli[method]["eps0"]
            exported = view.payload["eps0"][method]["eps0"]
            assert (cell is None or (isinstance(cell, float) and math.isnan(cell))) == (value is None)
            if value is not None:
                assert float(cell) == float(format_number(value, 7, down=True)) == \
                    float(format_number(exported, 7, down=True)), (method, eps, delta, k)
        shown = float(str(noise_table["answer"][0]).split("=")[1])
        exported = view.payload["noise"]["gaussian"]["sigma"]
        assert shown == float(format_number(sigma, 7)) == float(format_number(exported, 7)), (eps, delta, k)


@pytest.mark.parametrize(("key", "flag"), [("laplace", "scale"), ("discrete-gaussian", "sigma")])
def test_hinted_noise_searches_give_the_page_and_a_fresh_cli_one_answer(key: str, flag: str) -> None:
    """Laplace's and the discrete Gaussian's searches start at a close mechanism's answer
    (``noise.HINTS``), made inside ``smallest_noise``: the page's table (which asks for that
    mechanism too, first) and ``dpviz plan noise`` in a fresh process give the same number."""
    eps, delta, k = "0.7", "3e-7", "40"
    plans = pv.noise_plans(epsilon=0.7, delta=3e-7, k=40, sensitivity=1.0, sampling_rate=1.0)
    page = plans[key].value
    budget = str(budgets.PAGE_SEARCH.seconds)
    done = subprocess.run([sys.executable, "-m", "dpviz", "plan", "noise", key, "--epsilon", eps, "--delta",
                           delta, "--k", k, "--budget", budget], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)[flag] == page
