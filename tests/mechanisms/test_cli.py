"""``python -m dpviz mechanism``: JSON on stdout, exit 2 and one line on stderr on bad input."""

from __future__ import annotations

import json

import pytest

from dpviz.cli import main
from dpviz.figures.mechanisms import ROUTE_KEYS
from dpviz.mechanisms import gaussian
from tests.oracles import assert_sound_and_tight, mp_zcdp_epsilon


def _run(capsys, *argv):
    code = main(["mechanism", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_gaussian_closed_form(capsys):
    code, out, _ = _run(capsys, "gaussian", "--sigma", "1", "--k", "1000", "--delta", "1e-5")
    data = json.loads(out)
    assert code == 0 and data["method"] == "analytic"
    lo, hi = gaussian.epsilon_bracket(delta=1e-5, sigma=1.0, k=1000)
    assert data["epsilon"] == data["epsilon_upper"] == hi and data["epsilon_lower"] == lo


@pytest.mark.parametrize(("argv", "method"), [
    (["laplace", "--scale", "2", "--k", "20", "--delta", "1e-6"], "pld"),
    (["geometric", "--eps0", "0.3", "--k", "20", "--delta", "1e-6"], "exact"),
    (["randomized-response", "--eps0", "0.3", "--k", "20", "--delta", "1e-6"], "exact"),
    (["gaussian", "--sigma", "2", "--k", "50", "--sampling-rate", "0.1", "--delta", "1e-6"], "pld"),
    (["canonical", "--eps0", "0.3", "--delta0", "1e-8", "--k", "20", "--delta", "1e-6"], "exact"),
])
def test_interval_json(capsys, argv, method):
    """Finite pairs compose exactly (issue 8); continuous laws get the certified PLD interval."""
    code, out, _ = _run(capsys, *argv)
    data = json.loads(out)
    assert code == 0 and data["method"] == method
    assert data["epsilon_lower"] <= data["epsilon_upper"] == data["epsilon"]
    assert data["width"] == pytest.approx(data["epsilon_upper"] - data["epsilon_lower"])


def test_compare_lists_routes(capsys):
    code, out, _ = _run(capsys, "randomized-response", "--eps0", "0.5", "--k", "10", "--delta", "1e-5",
                        "--compare")
    routes = json.loads(out)["routes"]
    assert code == 0 and list(routes) == [key for key in ROUTE_KEYS if key != "analytic"]  # Gaussian only
    no_sampling = routes["rdp_analytic"]  # a comparison row about subsampling: said, not computed
    assert no_sampling["status"] == "not_computed" and "subsampling" in no_sampling["reason"]
    # zCDP: ε0-DP is ε0²/2-zCDP (Steinke Prop. 16), 10 steps add (Thm 13), Prop. 14 converts
    assert_sound_and_tight(routes["zcdp"]["upper"], mp_zcdp_epsilon(10 * 0.5**2 / 2, 1e-5))
    assert routes["zcdp"]["upper"] >= routes["exact"]["upper"]
    # RR is the worst case among ε0-DP mechanisms: generic composition is exact here
    slack = 1e-12 * routes["generic"]["upper"]  # the grid is exact here too: equal up to rounding
    assert routes["pld"]["lower"] - slack <= routes["generic"]["upper"] <= routes["pld"]["upper"] + slack
    assert routes["exact"]["upper"] == pytest.approx(routes["generic"]["upper"], rel=1e-12)


@pytest.mark.parametrize(("argv", "field"), [
    (["gaussian", "--sigma", "0", "--k", "5", "--delta", "1e-5"], "sigma"),
    (["laplace", "--scale", "abc", "--k", "5", "--delta", "1e-5"], "scale"),
    (["geometric", "--eps0", "0.5", "--k", "0", "--delta", "1e-5"], "k"),
    (["randomized-response", "--eps0", "0.5", "--k", "5", "--delta", "1"], "delta"),
    (["gaussian", "--sigma", "1", "--k", "5", "--delta", "1e-5", "--sampling-rate", "2"], "sampling-rate"),
    (["laplace", "--scale", "1", "--k", "5", "--delta", "1e-5", "--h", "1e-9"], "h"),
    (["geometric", "--eps0", "0.5", "--sensitivity", "1.5", "--k", "5", "--delta", "1e-5"], "sensitivity"),
])
def test_bad_input_exit_2_one_line(capsys, argv, field):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"{field} must be" in err


def test_missing_flag_is_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["mechanism", "gaussian", "--k", "5", "--delta", "1e-5"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "--sigma" in err
