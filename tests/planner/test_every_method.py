"""The planner answers for every ``METHODS`` entry, whatever it holds at test time (issue 9: "any
method added later", e.g. zCDP), and for a toy method added here that has no δ0 support and
answers with its own kind: every answer fits forward, the next value up does not (or cannot tell),
a row without a value says why; the CLI and the page list it without any change."""

from __future__ import annotations

import json
import math
import types

import pytest

from dpviz.cli import main as cli_main
from dpviz.composition import METHODS, Levels, Method, homogeneous, parse_levels
from dpviz.guarantee import DeltaCurve, Guarantee, Kind, Status
from dpviz.planner import composition as pc
from dpviz.planner.result import fits_state
from dpviz.views import planner as pv

TOY_SOURCE = "Toy: twice basic, pure levels only"


def _toy_eps(levels: Levels, *, delta: float) -> Guarantee:
    if any(lv.delta > 0 for lv in levels):
        return Guarantee.not_computed(source=TOY_SOURCE, reason="the toy method takes pure ε levels only")
    return Guarantee(epsilon=2.0 * sum(lv.count * lv.epsilon for lv in levels), delta=0.0, kind=Kind.UPPER,
                     source=TOY_SOURCE)


def _toy_delta(levels: Levels, *, epsilon: float) -> Guarantee:
    g = _toy_eps(levels, delta=0.0)
    if not g.feasible:
        return g
    if epsilon < g.epsilon:  # type: ignore[operator]
        return Guarantee.impossible(source=TOY_SOURCE, reason="no δ below twice Σε", solved="delta")
    return Guarantee(epsilon=epsilon, delta=0.0, kind=Kind.UPPER, source=TOY_SOURCE, solved="delta")


def _toy_curve(levels: Levels, epsilons: object) -> DeltaCurve:
    eps = [float(e) for e in epsilons]  # type: ignore[attr-defined]
    return DeltaCurve.pointwise([_toy_delta(levels, epsilon=e) for e in eps], eps, source=TOY_SOURCE)


TOY = Method("toy", "Toy method (twice basic)",
             types.SimpleNamespace(epsilon_for_delta=_toy_eps, delta_for_epsilon=_toy_delta,  # type: ignore[arg-type]
                                   delta_curve=_toy_curve))


@pytest.fixture(params=["as-is", "with-toy"])
def methods(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> dict[str, Method]:
    """METHODS as the tree holds it, and with the toy method inserted before the optimum."""
    if request.param == "with-toy":
        items = list(METHODS.items())
        new = dict([*items[:-1], ("toy", TOY), *items[-1:]])
        for module in (pc, pv, __import__("dpviz.cli.plan", fromlist=["METHODS"])):
            monkeypatch.setattr(module, "METHODS", new)
        return new
    return dict(METHODS)


def _check(plans: dict, methods: dict[str, Method], levels_at, epsilon: float, delta: float) -> None:
    assert list(plans) == list(methods)
    for key, p in plans.items():
        if not p.feasible:
            assert p.status in (Status.IMPOSSIBLE, Status.NOT_COMPUTED) and (p.reason or p.check.reason), key
            continue
        g = methods[key].epsilon_for_delta(levels_at(p.value), delta=delta)
        assert g.feasible and g.epsilon <= epsilon and g.delta <= delta, (key, g)
        assert p.check.epsilon == g.epsilon and p.kind is g.kind
        if p.beyond is not None:
            assert fits_state(p.beyond, epsilon) is not True, (key, p.beyond)


@pytest.mark.parametrize("delta0", [0.0, 1e-8])
def test_largest_eps0_for_every_method(methods: dict[str, Method], delta0: float) -> None:
    plans = pc.max_eps0(k=40, epsilon=1.0, delta=1e-5, delta0=delta0)
    _check(plans, methods, lambda v: homogeneous(k=40, eps0=v, delta0=delta0), 1.0, 1e-5)
    if "toy" in plans:
        toy = plans["toy"]
        assert toy.feasible == (delta0 == 0.0)
        if delta0 == 0.0:
            assert toy.value == pytest.approx(1.0 / 80, rel=1e-9) and toy.kind is Kind.UPPER
        else:
            assert toy.status is Status.NOT_COMPUTED and "pure" in (toy.reason or "")


@pytest.mark.parametrize("delta0", [0.0, 1e-9])
def test_largest_k_for_every_method(methods: dict[str, Method], delta0: float) -> None:
    plans = pc.max_k(eps0=0.02, epsilon=1.0, delta=1e-5, delta0=delta0)
    _check(plans, methods, lambda v: homogeneous(k=int(v), eps0=0.02, delta0=delta0), 1.0, 1e-5)
    for p in plans.values():
        if p.feasible and p.beyond is not None:
            assert p.beyond_value == p.value + 1
    if "toy" in plans:
        assert plans["toy"].value == (25 if delta0 == 0.0 else None)


def test_common_factor_for_every_method(methods: dict[str, Method]) -> None:
    levels = parse_levels("0.1:0:30,0.5:0:10")
    plans = pc.max_factor(levels, epsilon=1.0, delta=1e-5)
    _check(plans, methods, lambda c: pc.scaled(levels, c), 1.0, 1e-5)


def test_cli_and_page_list_every_method(methods: dict[str, Method], capsys: pytest.CaptureFixture) -> None:
    assert cli_main(["plan", "eps0", "--epsilon", "1", "--delta", "1e-5", "--k", "40", "--delta0", "1e-8"]) \
        in (0, None)
    out = json.loads(capsys.readouterr().out)
    assert list(out) == list(methods)
    for key, row in out.items():
        assert row["status"] in ("ok", "impossible", "not_computed"), key
        assert (row["eps0"] is None) == (row["status"] != "ok") and row["delta0"] == 1e-8
    view = pv.build(**{**pv.SPEC.defaults(), "k_max": 20})
    assert [r["method"] for r in view.tables["eps0"]] == [pv.method_label(m) for m in methods]
    assert [r["method"] for r in view.tables["k"]] == [pv.method_label(m) for m in methods]
    assert set(view.csv["noise_vs_k"]) >= {f"sd_{m}" for m in methods}
    names = [t.name.replace("<br>", " ") for t in view.figures["noise_vs_k"].data]  # legend wrapping
    assert all(any(pv.method_label(m) in n for n in names) for m in methods)
    if "toy" in methods:
        assert pv.method_label("toy") == TOY.label
        sd = view.csv["noise_vs_k"]["sd_toy"]
        assert all(math.isfinite(x) for x in sd)  # pure levels at the default δ0 = 0
