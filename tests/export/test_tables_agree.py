"""Each page's table, its CSV and its JSON agree (issue 19: one result protocol).

Every displayed number is read back (``table_number``) and compared with the CSV's full-precision
value of the same row: a lower end is shown at most that value, an upper end or a stated ε/δ at
least it, both within the display's rounding; the JSON (the view's payload, which is what
``--json`` prints) holds the CSV's value exactly. The columns compared are listed here, not read
from the table builders, so a builder that drifts from them fails.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from dpviz.attack.curve import Certificate
from dpviz.attack.run import AttackResult
from dpviz.attack.theory import Curve
from dpviz.cli import main
from dpviz.figures.tables import NO_VALUE, Column, table_csv, table_number, table_rows
from dpviz.guarantee import Guarantee, Kind
from dpviz.planner.result import Plan
from dpviz.results import Answer, Interval, Result
from dpviz.views import mechanisms as mv
from dpviz.views import planner as pv
from tests.export import cases

DOWN, UP = "down", "up"
"""A lower end is rounded down, an upper end and a stated value up."""


def agree(rows: Sequence[Mapping[str, str]], csv: Mapping[str, Sequence[Any]],
          pairs: Sequence[tuple[str, str, str, int]]) -> list[str]:
    """Where a displayed cell does not show its CSV value: (header, csv column, rounding, significant
    digits shown) per compared column; '—' exactly where the CSV has no value."""
    bad = []
    for header, name, way, digits in pairs:
        assert len(csv[name]) == len(rows), name
        for i, (row, value) in enumerate(zip(rows, csv[name], strict=True)):
            shown = table_number(row[header])
            if value is None or (isinstance(value, float) and not math.isfinite(value)):
                if shown is not None:
                    bad.append(f"row {i} {header}: {row[header]} shown, no value in the CSV")
                continue
            if shown is None:
                bad.append(f"row {i} {header}: '{NO_VALUE}' shown, {value!r} in the CSV")
                continue
            slack = 4 * math.ulp(value)
            off = shown > value + slack if way == DOWN else shown < value - slack
            if off or abs(shown - value) > 10.0 ** (1 - digits) * abs(value) + slack:
                bad.append(f"row {i} {header}: {row[header]} shown for {value!r} (rounded {way})")
    return bad


def same_json(csv: Sequence[Any], payload: Mapping[str, Mapping[str, Any]], keys: Sequence[str],
              field: str, *, when_ok: bool = False) -> list[str]:
    """Where the JSON's ``field`` of a row is not the CSV's value (None for no value); ``when_ok``:
    a row whose JSON status is not "ok" has no value in the CSV (the JSON may still state the
    target it was asked at)."""
    out = []
    for key, value in zip(keys, csv, strict=True):
        have = None if value is None or not math.isfinite(value) else value
        want = None if when_ok and payload[key]["status"] != "ok" else payload[key][field]
        if have != want:
            out.append(f"{key}.{field}: JSON {payload[key][field]!r}, CSV {value!r}")
    return out


# --------------------------------------------------------------------------- the checker can fail
def test_the_checker_finds_each_disagreement() -> None:
    csv = {"lower": [0.123456789, None], "upper": [0.123456789, 2.0]}
    good = [{"lo": "0.12345678", "up": "0.12345679"}, {"lo": NO_VALUE, "up": "2"}]
    pairs = [("lo", "lower", DOWN, 8), ("up", "upper", UP, 8)]
    assert agree(good, csv, pairs) == []
    up_rounded_down = [{**good[0], "up": "0.12345678"}, good[1]]
    assert agree(up_rounded_down, csv, pairs) == ["row 0 up: 0.12345678 shown for 0.123456789 (rounded up)"]
    lower_rounded_up = [{**good[0], "lo": "0.12345679"}, good[1]]
    assert len(agree(lower_rounded_up, csv, pairs)) == 1
    too_far = [{**good[0], "up": "0.13"}, good[1]]
    assert len(agree(too_far, csv, pairs)) == 1
    value_hidden = [good[0], {"lo": "1", "up": "2"}]
    assert agree(value_hidden, csv, pairs) == ["row 1 lo: 1 shown, no value in the CSV"]
    assert same_json([1.0, None], {"a": {"x": 1.0}, "b": {"x": None}}, ["a", "b"], "x") == []
    assert same_json([1.0], {"a": {"x": 1.0000001}}, ["a"], "x") != []
    assert same_json([None], {"a": {"x": 1.0, "status": "not_computed"}}, ["a"], "x", when_ok=True) == []
    assert same_json([1.0], {"a": {"x": 1.0, "status": "not_computed"}}, ["a"], "x", when_ok=True) != []


# --------------------------------------------------------------------------- the protocol
def test_every_answer_type_follows_the_protocol() -> None:
    g = Guarantee(epsilon=1.0, delta=1e-5, kind=Kind.UPPER, source="s")
    plan = Plan(key="basic", name="eps0", value=0.01, check=g, target_epsilon=1.0, target_delta=1e-5)
    cert = Certificate(epsilon=0.5, threshold=0.0, p_fa_upper=0.1, p_md_upper=0.2, false_alarms=1,
                       misses=2, trials=10, confidence=0.95, estimate=0.7)
    curve = Curve(None, "none", "s", reason="over budget")
    assert isinstance(g, Interval) and isinstance(plan, Answer) and isinstance(cert, Answer)
    assert isinstance(curve, Result) and not isinstance(curve, Answer)
    assert {"kind", "source", "status", "reason", "value", "feasible", "to_json"} <= set(dir(AttackResult))
    assert cert.to_json()["point_estimate_epsilon"] == 0.7 and cert.kind == "lower"
    assert curve.to_json() == {"kind": "none", "source": "s", "reason": "over budget"}
    assert not isinstance(1.0, Result) and not isinstance({"kind": "x"}, Result)


def test_one_column_list_gives_the_display_and_the_csv() -> None:
    """A column without a header is in the CSV only, one without a CSV name on the page only."""
    results = {"a": Guarantee(epsilon=1.0, delta=1e-5, kind=Kind.UPPER, source="s")}
    cols: tuple[Column[Guarantee], ...] = (
        Column("shown", "both", lambda k, g: g.epsilon, lambda v: f"{v:.1f}"),
        Column(None, "csv", lambda k, g: k), Column("page", None, lambda k, g: "p"))
    assert table_rows(results, cols) == [{"shown": "1.0", "page": "p"}]
    assert table_csv(results, cols) == {"both": [1.0], "csv": ["a"]}


# --------------------------------------------------------------------------- the pages
ROUTE_PAIRS = [("ε lower", "lower", DOWN, 8), ("ε upper", "upper", UP, 8)]


@pytest.mark.parametrize("kind", sorted(mv.KINDS.values()))
def test_mechanisms_table_csv_and_json_agree(kind: str) -> None:
    view = cases.view("mechanisms", (("mechanism", kind),))
    rows, csv, results = view.tables["comparison"], view.csv["routes"], view.payload["results"]
    assert agree(rows, csv, ROUTE_PAIRS) == []
    assert list(results) == csv["route"]
    for end in ("lower", "upper"):
        assert same_json(csv[end], results, csv["route"], end) == []


def test_mechanisms_delta_table_and_mix_agree() -> None:
    mech = mv.make_mechanism("laplace", {"scale": 2.0, "sampling_rate": 0.05})
    view = mv.refine(mech, k=200, epsilon=1.0)
    pairs = [("δ lower", "lower", DOWN, 8), ("δ upper", "upper", UP, 8)]
    assert agree(view.tables["comparison"], view.csv["routes"], pairs) == []
    mix = mv.mix_view(mv.MIX.default, delta=1e-5)
    assert agree(mix.tables["mix"], mix.csv["mix"], ROUTE_PAIRS) == []
    for end in ("lower", "upper"):
        assert same_json(mix.csv["mix"][end], mix.payload["results"], mix.csv["mix"]["route"], end) == []


@pytest.mark.parametrize("case", [c for c in cases.CASES if c[0] == "priors"], ids=cases.case_id)
def test_priors_table_csv_and_json_agree(case: tuple[str, tuple[tuple[str, str], ...]]) -> None:
    view = cases.view(*case)
    rows, csv, bounds = view.tables["bounds"], view.csv["bounds"], view.payload["bounds"]
    assert agree(rows, csv, [("ε", "epsilon", UP, 6), ("δ", "delta", UP, 4)]) == []
    assert [r["bound"] for r in rows] == csv["bound"] and len(bounds) == len(rows)
    for field in ("epsilon", "delta"):
        assert same_json(csv[field], bounds, list(bounds), field, when_ok=True) == []


@pytest.mark.parametrize("kw", [{}, {"epsilon": 3.0, "k": 1000, "delta0": 0.0, "sensitivity": 2.0},
                                {"epsilon": 0.5, "delta": 0.0, "k": 10, "prior": "uniform-nonzero"}])
def test_planner_tables_csv_and_json_agree(kw: dict[str, Any]) -> None:
    view = pv.build(**(cases.values("planner") | kw))
    for table, name, header in (("eps0", "eps0", "largest ε0"), ("gce", "eps0", "largest ε0")):
        csv = view.csv[table]
        assert agree(view.tables[table], csv, [(header, name, DOWN, 7)]) == [], table
        keys = csv["method" if table == "eps0" else "bound"]
        assert same_json(csv[name], view.payload[table], keys, "eps0", when_ok=True) == [], table
    csv = view.csv["k"]
    assert [None if r["largest k"] == NO_VALUE else int(r["largest k"].replace(",", ""))
            for r in view.tables["k"]] == csv["k"]
    assert [view.payload["k"][m]["k"] if view.payload["k"][m]["status"] == "ok" else None
            for m in csv["method"]] == csv["k"]


def test_curves_tables_and_json_agree() -> None:
    view = cases.view("curves")
    for table, key in (("at_k", "results_at_k"), ("heterogeneous", "results_heterogeneous")):
        results = view.payload[key]
        csv = {"epsilon": [r["epsilon"] if r["status"] == "ok" else None for r in results.values()],
               "delta": [r["delta"] if r["status"] == "ok" else None for r in results.values()]}
        assert agree(view.tables[table], csv, [("ε", "epsilon", UP, 6), ("δ", "delta", UP, 4)]) == [], table


CHEAP = ("exact", "analytic", "pure", "rdp", "rdp_analytic", "zcdp", "generic")
"""The routes whose answer does not depend on the caller's budget (the PLD's grid does)."""


@pytest.mark.parametrize(("kind", "flags"), [("gaussian", ("--sigma", "2", "--k", "100")),
                                             ("randomized-response", ("--eps0", "0.4", "--k", "30"))])
def test_the_command_line_json_is_the_pages(capsys: pytest.CaptureFixture[str], kind: str,
                                            flags: tuple[str, ...]) -> None:
    """``python -m dpviz mechanism … --compare`` and the page's table and CSV, route by route."""
    assert main(["mechanism", kind, *flags, "--delta", "1e-5", "--compare"]) == 0
    cli = json.loads(capsys.readouterr().out)["routes"]
    values = dict(zip(flags[::2], flags[1::2], strict=True))
    own = {p.key: p.check(values[f"--{p.key}"]) for p in mv.mechanism_params(kind) if f"--{p.key}" in values}
    view = mv.refine(mv.make_mechanism(kind, own), k=int(values["--k"]), delta=1e-5)
    csv = view.csv["routes"]
    shared = [i for i, key in enumerate(csv["route"]) if key in CHEAP and key in cli]
    assert len(shared) >= 3
    for i in shared:
        key, row = csv["route"][i], view.tables["comparison"][i]
        for end in ("lower", "upper"):
            have = None if csv[end][i] is None or not math.isfinite(csv[end][i]) else csv[end][i]
            assert cli[key][end] == view.payload["results"][key][end] == have, (key, end)
        assert agree([row], {"lower": [csv["lower"][i]], "upper": [csv["upper"][i]]}, ROUTE_PAIRS) == []
