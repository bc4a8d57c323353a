"""``python -m dpviz plan`` under odd input: every run answers JSON (exit 0) or one stderr line
(exit 2), never a traceback; every answer that has a value fits its target."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpviz.cli import main

NUMBERS = st.sampled_from(["0", "1", "1e-5", "0.5", "2", "-1", "nan", "inf", "1e400", "abc", "", "1e-400",
                           "100", "0.999999", "7"])
COUNTS = st.sampled_from(["1", "2", "10", "37", "1000", "0", "-3", "2.5", "1e3", "10000001", "x"])


@st.composite
def argv(draw: st.DrawFn) -> list[str]:
    question = draw(st.sampled_from(["eps0", "k", "noise", "gce"]))
    out = ["plan", question]
    if question == "noise":
        out.append(draw(st.sampled_from(["gaussian", "geometric", "randomized-response"])))
    out += ["--epsilon", draw(NUMBERS), "--delta", draw(NUMBERS)]
    if question == "k":
        out += ["--eps0", draw(NUMBERS)]
    else:
        out += ["--k", draw(COUNTS)]
    if draw(st.booleans()):
        out += ["--delta0", draw(NUMBERS)] if question != "noise" else ["--sensitivity", draw(NUMBERS)]
    if question == "gce":
        out += draw(st.sampled_from([["--cap", draw(COUNTS)], ["--prior", "at-least:2"], []]))
    return out


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # read each run
@given(args=argv())
def test_plan_answers_json_or_one_error_line(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(args)
    except SystemExit as exc:  # argparse: a missing or malformed flag
        code = exc.code
    out, err = capsys.readouterr()
    assert code in (0, 2), (args, code, err)
    if code == 2:
        assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (args, err)
        return
    assert err == ""
    answer = json.loads(out)
    eps = float(args[args.index("--epsilon") + 1])
    rows = [answer] if args[1] == "noise" else list(answer.values())
    for row in rows:
        if row.get("status") == "ok":
            assert row["total"]["epsilon"] <= eps, (args, row)
