"""``python -m dpviz gce`` with the Database priors page's typed priors (issue 12 item 4): the page's
URL keys are the flags, the rows and numbers are the page's, bad text is one stderr line."""

from __future__ import annotations

import json
import math

import pytest

from dpviz.cli import gce as cli_gce
from dpviz.cli import main
from dpviz.cli.flags import flag
from dpviz.views import database_priors as dp


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:
    code = main(["gce", *argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else {}), err


def _page(**kw: object) -> dict:
    args = {"preset": "custom", "kind": "typed", "eps0": 0.5, "delta0": 1e-6, "delta": 1e-3, "k": 8,
            "cap": None, "k2": None, "neighbouring": "unbounded", "common": 4, "free_only": 3, "paid_only": 5}
    view = dp.build(**(args | kw))  # type: ignore[arg-type]
    return view.payload["bounds"]


@pytest.mark.parametrize(("prior", "null"), [("1:0.5, 2-4:0.5", "paper"), ("zero", "one"),
                                             ("01100110:0.5, 10011001:0.5", "paper"),
                                             ("at-least:3", "paper"), ("2:1", "0:0.5, 1:0.5")])
def test_cli_is_the_page(capsys, prior: str, null: str) -> None:
    code, data, err = _run(capsys, "--eps0", "0.5", "--delta0", "1e-6", "--k", "8", "--delta", "1e-3",
                           "--prior", prior, "--null", null)
    page = _page(prior=prior, null=null)
    assert code == 0 and err == ""
    assert list(data) == list(page)
    for key, row in page.items():
        for field in ("epsilon", "delta", "kind", "source", "directions"):
            assert data[key][field] == row[field], (key, field)


def test_allowed_set_is_the_page(capsys) -> None:
    code, data, _ = _run(capsys, "--eps0", "0.3", "--delta", "1e-4", "--allowed", "1100, 0011, 0000",
                         "--neighbouring", "bounded")
    page = _page(kind="allowed", allowed="1100, 0011, 0000", eps0=0.3, delta0=0.0, delta=1e-4,
                 neighbouring="bounded")
    assert code == 0 and list(data) == list(page)
    assert all(data[key]["epsilon"] == row["epsilon"] for key, row in page.items())
    code, again, _ = _run(capsys, "--eps0", "0.3", "--delta", "1e-4", "--allowed", "1100, 0011, 0000",
                          "--neighbouring", "bounded", "--k", "4")
    assert code == 0 and again == data


def test_named_priors_unchanged(capsys) -> None:
    """The paper's own pairs typed by name keep every row of the paper (as before the typed flags)."""
    _, data, _ = _run(capsys, "--eps0", "0.5", "--k", "10", "--delta", "1e-3", "--prior", "uniform-nonzero")
    assert {"cor7", "theorem3_optimal", "theorem3_optimal_common", "exact", "classic"} <= set(data)
    by_size = ", ".join(f"{j}:{math.comb(10, j)}" for j in range(1, 11))  # U(B∖{0⃗}) typed over |b|
    _, typed, _ = _run(capsys, "--eps0", "0.5", "--k", "10", "--delta", "1e-3", "--prior", by_size)
    assert typed["exact"]["epsilon"] == pytest.approx(data["exact"]["epsilon"], rel=1e-9)


@pytest.mark.parametrize(("argv", "field"), [
    (("--k", "8", "--prior", "x:1"), "prior"),
    (("--k", "8", "--prior", "1:-2"), "prior"),
    (("--k", "8", "--prior", "9:1"), "prior"),
    (("--k", "4", "--prior", "0110:1", "--null", "01:1"), "null"),
    (("--k", "8", "--prior", "at-least:30"), "prior at-least:K2"),
    (("--allowed", "110, 0011"), "allowed"),
    (("--allowed", "1100, 0011", "--k", "5"), "k"),
    (("--k", "5", "--cap", "2", "--null", "zero"), "null"),
    (("--k", "5",), "prior/cap/allowed"),
    (("--k", "5", "--cap", "2", "--prior", "zero"), "prior/cap/allowed"),
    (("--prior", "zero"), "k"),
])
def test_bad_input_one_line(capsys, argv: tuple[str, ...], field: str) -> None:
    code, data, err = _run(capsys, "--eps0", "0.5", "--delta", "1e-3", *argv)
    assert code == 2 and data == {}
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"error: {field} must be" in err


def test_flags_are_the_page_url_keys() -> None:
    """Round trip: every typed input of the page has the CLI flag of its URL key, with the same check."""
    flags = {flag(p): p for p in cli_gce.PARAMS}
    for p in (dp.PRIOR, dp.NULL, dp.ALLOWED, dp.NEIGHBOURING):
        assert flag(p) in flags and flags[flag(p)].key == p.key
        assert flags[flag(p)].check(p.default) == p.check(p.default)
