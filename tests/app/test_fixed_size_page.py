"""Fixed-size sampling on the Mechanisms page (issue 21 item 14: "a subsampling option of every
mechanism"): a batch of m of n records, replace-one, answered by the same engine as
``dpviz mechanism … --batch-size m --dataset-size n --neighbouring replace-one`` and as Poisson
sampling at q = m/n with replace-one neighbours (Balle-Barthe-Gaboardi 2018; docs/MATH.md §23)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from dpviz.cli import main
from dpviz.figures.tables import format_number
from tests.app.helpers import assert_clean, errors, run_page
from tests.app.test_one_engine import HEADLINE


def _cli(*argv: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0, argv
    return json.loads(out.getvalue())


def _headline(at) -> str:  # type: ignore[no-untyped-def]
    return next(m for g in (HEADLINE.search(x.value) for x in at.markdown) if g for m in g.groups() if m)


@pytest.mark.parametrize(("kind", "own", "m", "n"), [
    ("gaussian", {"sigma": "1.1"}, 256, 60_000),
    ("laplace", {"scale": "20"}, 100, 1_000),
    ("geometric", {"eps0": "0.5"}, 10, 10),  # m = n: every record, still replace-one
])
def test_page_headline_is_the_cli_answer_and_poisson_at_m_over_n(kind: str, own: dict[str, str],
                                                                  m: int, n: int) -> None:
    at = run_page("pages/4_Mechanisms.py", mechanism=kind, sampling="fixed-size", batch_size=str(m),
                  dataset_size=str(n), k="200", delta="1e-6", **own)
    assert_clean(at)
    assert not errors(at)
    labels = {w.label for w in at.text_input}
    assert {"batch size m", "dataset size n"} <= labels and "sampling rate q" not in labels
    flags = [s for key, v in own.items() for s in (f"--{key}", v)]
    cli = _cli("mechanism", kind, *flags, "--k", "200", "--delta", "1e-6", "--batch-size", str(m),
               "--dataset-size", str(n), "--neighbouring", "replace-one", "--budget", "2")
    poisson = _cli("mechanism", kind, *flags, "--k", "200", "--delta", "1e-6", "--sampling-rate", str(m / n),
                   "--neighbouring", "replace-one", "--budget", "2")
    assert _headline(at) == format_number(cli["epsilon"]) == format_number(poisson["epsilon"])
    assert cli["mechanisms"][0]["sampling"] == "fixed-size"


def test_a_batch_larger_than_the_dataset_is_named_in_the_page_words() -> None:
    at = run_page("pages/4_Mechanisms.py", sampling="fixed-size", batch_size="70000", dataset_size="60000")
    assert_clean(at)
    (message,) = errors(at)
    assert message.startswith("batch size m must be") and "dataset size n = 60,000" in message


def test_an_unknown_scheme_falls_back_to_poisson_with_a_notice() -> None:
    at = run_page("pages/4_Mechanisms.py", sampling="stratified")
    assert_clean(at)
    assert any(e.startswith("subsampling must be one of Poisson, fixed-size") for e in errors(at))
    assert "sampling rate q" in {w.label for w in at.text_input}


def test_a_mechanism_without_replace_one_says_so() -> None:
    at = run_page("pages/4_Mechanisms.py", mechanism="randomized-response", sampling="fixed-size")
    assert_clean(at)
    said = "neighbouring must be add-remove for the randomized-response"
    assert any(e.startswith(said) for e in errors(at))
