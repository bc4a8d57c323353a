"""``python -m dpviz mechanism``: the contract of every registered subcommand and of ``mix``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpviz.cli import main
from dpviz.mechanisms import routes as R
from dpviz.mechanisms.registry import MECHANISMS, make

FLAGS = {
    "gaussian": ["--sigma", "2"], "laplace": ["--scale", "2"], "geometric": ["--eps0", "0.3"],
    "randomized-response": ["--eps0", "0.3", "--categories", "3"], "canonical": ["--eps0", "0.3"],
    "finite": ["--p", "0.6,0.4", "--q", "0.4,0.6"], "discrete-gaussian": ["--sigma", "3"],
}
KEYS = {"epsilon", "epsilon_lower", "epsilon_upper", "method", "width", "seconds", "detail"}


def _run(capsys, *argv):
    code = main(["mechanism", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_every_registered_mechanism_is_a_subcommand() -> None:
    assert set(FLAGS) == set(MECHANISMS)


@pytest.mark.parametrize("key", sorted(FLAGS))
def test_subcommand_answers_with_the_json_shape(capsys, key: str) -> None:
    code, out, _ = _run(capsys, key, *FLAGS[key], "--k", "5", "--delta", "1e-6")
    data = json.loads(out)
    assert code == 0 and set(data) >= KEYS and data["status"] == "ok"
    assert data["epsilon"] == data["epsilon_upper"] and data["epsilon_lower"] <= data["epsilon_upper"]


def test_delta_zero_for_a_pure_mechanism_is_the_largest_loss(capsys) -> None:
    code, out, _ = _run(capsys, "laplace", "--scale", "0.5", "--k", "7", "--delta", "0")
    data = json.loads(out)
    assert code == 0 and data["epsilon"] == pytest.approx(14.0, rel=1e-15) and data["width"] == 0.0


@pytest.mark.parametrize("argv", [["gaussian", "--sigma", "1"], ["discrete-gaussian", "--sigma", "1"],
                                  ["canonical", "--eps0", "0.3", "--delta0", "1e-6"]])
def test_delta_zero_refused_in_one_line_where_epsilon_is_infinite(capsys, argv) -> None:
    code, out, err = _run(capsys, *argv, "--k", "3", "--delta", "0")
    assert code == 2 and out == "" and err.count("\n") == 1 and "delta must be > 0" in err


def test_epsilon_gives_delta_with_its_bracket(capsys) -> None:
    code, out, _ = _run(capsys, "randomized-response", "--eps0", "0.4", "--categories", "3", "--k", "20",
                        "--epsilon", "2")
    data = json.loads(out)
    exact = R.exact([(make("randomized-response", eps0=0.4, categories=3), 20)], epsilon=2.0)
    assert code == 0 and data["method"] == "exact" and data["delta"] == exact.delta
    assert data["delta_lower"] == data["delta_upper"] == data["delta"] and data["epsilon"] == 2.0


def test_epsilon_and_delta_are_exclusive(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["mechanism", "laplace", "--scale", "1", "--k", "3", "--delta", "1e-5", "--epsilon", "1"])
    assert exc.value.code == 2 and capsys.readouterr().err.count("\n") == 1


def test_replace_one_neighbours(capsys) -> None:
    base = ["gaussian", "--sigma", "1", "--k", "100", "--sampling-rate", "0.05", "--delta", "1e-5"]
    _, out_ar, _ = _run(capsys, *base)
    code, out_ro, _ = _run(capsys, *base, "--neighbouring", "replace-one")
    ar, ro = json.loads(out_ar), json.loads(out_ro)
    assert code == 0 and ro["epsilon_lower"] > ar["epsilon_upper"]
    assert ro["mechanisms"][0]["neighbouring"] == "replace-one"
    code, out, err = _run(capsys, "randomized-response", "--eps0", "1", "--k", "3", "--sampling-rate", "0.1",
                          "--neighbouring", "replace-one", "--delta", "1e-5")
    assert code == 2 and out == "" and err.count("\n") == 1 and "neighbouring must be" in err


def test_mix_of_one_part_equals_the_single_command(capsys) -> None:
    _, single, _ = _run(capsys, "gaussian", "--sigma", "1.1", "--k", "200", "--sampling-rate", "0.02",
                        "--delta", "1e-6")
    spec = json.dumps([{"mechanism": "gaussian", "sigma": 1.1, "count": 200, "sampling_rate": 0.02}])
    code, mixed, _ = _run(capsys, "mix", "--spec", spec, "--delta", "1e-6")
    a, b = json.loads(single), json.loads(mixed)
    assert code == 0
    for key in ("epsilon", "epsilon_lower", "epsilon_upper", "method", "width"):
        assert a[key] == b[key]


def test_mix_from_a_file_with_three_kinds(capsys, tmp_path) -> None:
    spec = [{"mechanism": "gaussian", "sigma": 1.0, "count": 100, "sampling_rate": 0.01},
            {"mechanism": "laplace", "scale": 10, "count": 10},
            {"mechanism": "randomized-response", "eps0": 0.5, "count": 5}]
    path = tmp_path / "mix.json"
    path.write_text(json.dumps(spec))
    code, out, _ = _run(capsys, "mix", "--spec", str(path), "--delta", "1e-5", "--compare")
    data = json.loads(out)
    assert code == 0 and data["status"] == "ok" and len(data["mechanisms"]) == 3
    r = data["routes"]
    assert r["pld"]["lower"] <= data["epsilon"] <= min(r["rdp"]["upper"], r["generic"]["upper"])
    # more mechanisms never cost less: the mix is above each of its parts alone
    _, alone, _ = _run(capsys, "laplace", "--scale", "10", "--k", "10", "--delta", "1e-5")
    assert data["epsilon_lower"] >= json.loads(alone)["epsilon_lower"]


@pytest.mark.parametrize(("spec", "field"), [
    ("[", "spec must be valid JSON"),
    ("{}", "spec must be a list"),
    ("[]", "spec must be a list"),
    ('[{"mechanism": "nope", "count": 1}]', "spec[0].mechanism must be"),
    ('[{"mechanism": "laplace", "scale": 1}]', "spec[0].count must be"),
    ('[{"mechanism": "laplace", "scale": 1, "count": 1e12}]', "spec[0].count must be"),
    # an unknown key is the error's value, never its field name (a key is user text: issue 22 item 2)
    ('[{"mechanism": "laplace", "scale": 1, "count": 1, "scael": 2}]',
     "spec[0].parameter must be one of the parameters of the laplace mechanism: scale, sensitivity, "
     "got spec[0].parameter='scael'"),
    ('[{"mechanism": "laplace", "scale": "x", "count": 1}]', "spec[0].scale must be"),
    ('[1]', "spec[0] must be"),
    ("/no/such/file.json", "spec must be a readable JSON file"),
])
def test_bad_specs_exit_2_in_one_line(capsys, spec: str, field: str) -> None:
    code, out, err = _run(capsys, "mix", "--spec", spec, "--delta", "1e-5")
    assert code == 2 and out == "" and err.count("\n") == 1 and field in err


def test_a_new_mechanism_is_one_class_and_one_registry_entry(capsys, monkeypatch) -> None:
    """What adding a mechanism takes: a ``Mechanism`` subclass (its Params and loss law) and its
    registry entry; the CLI subcommand, its flags, validation and every route follow."""
    from functools import partial

    from dpviz.mechanisms.base import Mechanism
    from dpviz.mechanisms.registry import MECHANISMS
    from dpviz.params import Param
    from dpviz.pld.law import LossLaw
    from dpviz.validation import check_probability

    class Coin(Mechanism):  # report the bit, flipped with probability f < 1/2
        key = "coin"
        title = "Coin flip"
        finite = True
        required = ("flip",)
        params = (Param("flip", "flip probability", None,
                        partial(check_probability, field="flip", open_high=True),
                        "probability f in (0, 1/2) of flipping the bit"),)

        def loss_law(self) -> LossLaw:
            f = self.flip
            loss = [np.log((1 - f) / f), np.log(f / (1 - f))]
            return LossLaw.from_atoms("coin", loss, [1 - f, f], [f, 1 - f], symmetric=True)

    monkeypatch.setitem(MECHANISMS, "coin", Coin)
    code, out, _ = _run(capsys, "coin", "--flip", "0.25", "--k", "10", "--delta", "1e-6")
    rr = R.exact([(make("randomized-response", eps0=float(np.log(3.0))), 10)], delta=1e-6)
    data = json.loads(out)
    assert code == 0 and data["method"] in ("exact", "generic")  # a symmetric bit is KOV's worst case: equal
    assert data["epsilon"] == pytest.approx(rr.epsilon, rel=1e-12) and data["width"] <= 1e-12
    code, out, err = _run(capsys, "coin", "--flip", "2", "--k", "10", "--delta", "1e-6")
    assert code == 2 and "flip must be" in err


def test_mix_neighbouring_flag_is_the_default_of_its_entries(capsys) -> None:
    entry = {"mechanism": "gaussian", "sigma": 1.0, "count": 50, "sampling_rate": 0.05}
    one, named = json.dumps([entry]), json.dumps([{**entry, "neighbouring": "replace-one"}])
    _, flag, _ = _run(capsys, "mix", "--spec", one, "--neighbouring", "replace-one", "--delta", "1e-5")
    _, named, _ = _run(capsys, "mix", "--spec", named, "--delta", "1e-5")
    _, plain, _ = _run(capsys, "mix", "--spec", one, "--delta", "1e-5")
    a, b, c = json.loads(flag), json.loads(named), json.loads(plain)
    assert a["epsilon"] == b["epsilon"] and a["epsilon_lower"] > c["epsilon_upper"]


def test_routes_that_disagree_are_said_and_not_exact(capsys, monkeypatch) -> None:
    """A certified lower above another route's upper (a bug in one of them) reaches the JSON as a note,
    the headline is an upper bound from a route no lower contradicts, never "exact"."""
    from dpviz.guarantee import Guarantee, Kind

    fake = {"exact": Guarantee(epsilon=3.91, delta=1e-3, kind=Kind.EXACT, source="exact atoms"),
            "rdp": Guarantee(epsilon=0.68, delta=1e-3, kind=Kind.UPPER, source="rdp")}
    monkeypatch.setattr(R, "routes", lambda *a, **kw: fake)
    argv = ("finite", "--p", "0.99,0.01", "--q", "0.5,0.5", "--k", "1", "--delta", "1e-3")
    code, text, err = _run(capsys, *argv)
    assert code == 0 and not err
    out = json.loads(text)
    assert out["kind"] == "upper" and out["epsilon"] == 3.91 and out["method"] == "exact"
    assert out["note"].startswith("routes disagree: exact lower 3.91 > rdp upper 0.68")
