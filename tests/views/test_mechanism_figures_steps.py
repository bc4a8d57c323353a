"""The Mechanisms page's figures take the per-step (ε0, δ0) of KOV Thm 3.3 from the same place as the
generic route (``routes.step_level``): where there is none (replace-one by group privacy makes
(1 + e^ε)δ exceed 1, or ε0 > EPSILON_MAX) the figures leave the generic optimum out instead of
raising (a shared link reached it: discrete Gaussian σ = 0.5, Δ = 2, Poisson q = 0.01, replace-one)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.composition.levels import Level
from dpviz.mechanisms import routes
from dpviz.views import mechanisms as mv

STEEP = {"sigma": 0.5, "sensitivity": 2, "sampling_rate": 0.01, "neighbouring": "replace-one"}


def test_a_per_step_delta_of_at_least_one_is_no_level() -> None:
    mech = mv.make_mechanism("discrete-gaussian", STEEP)
    step_delta = 5e-6 / 2000
    assert mech.step_guarantee(step_delta).delta >= 1.0  # the case itself: group privacy's (1 + e^ε)δ
    level = routes.step_level(mech, 1000, step_delta=step_delta)
    assert isinstance(level, str) and "δ0" in level


def test_the_generic_route_and_the_figures_agree_on_it() -> None:
    mech = mv.make_mechanism("discrete-gaussian", STEEP)
    g = routes.generic([(mech, 1000)], delta=5e-6)
    assert g.epsilon is None and "δ0" in (g.reason or "")
    view = mv.figures_for("discrete-gaussian", mv.as_values(STEEP), k=1000, delta=5e-6)
    assert set(view.figures) >= {"histogram", "region", "delta", "epsilon_vs_k"}
    names = {trace.name for trace in view.figures["delta"].data}
    assert not any("optimal" in (n or "").lower() for n in names)


def test_a_usable_step_is_the_generic_routes_level() -> None:
    mech = mv.make_mechanism("gaussian", {"sigma": 1.0, "sensitivity": 1.0})
    level = routes.step_level(mech, 40, step_delta=1e-5 / 80)
    assert isinstance(level, Level) and level.count == 40 and 0.0 < level.delta < 1.0
    view = mv.figures_for("gaussian", mv.as_values({"sigma": 1.0, "sensitivity": 1.0}), k=40, delta=1e-5)
    names = {trace.name for trace in view.figures["delta"].data}
    assert any("optimal" in (n or "").lower() for n in names)  # so the check above can fail


KINDS = {"gaussian": ("sigma", 0.2, 20.0), "laplace": ("scale", 0.2, 20.0),
         "geometric": ("eps0", 0.01, 5.0), "discrete-gaussian": ("sigma", 0.2, 20.0)}


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(sorted(KINDS)), noise=st.floats(0.0, 1.0), sensitivity=st.sampled_from([1, 2, 3]),
       rate=st.sampled_from([None, 0.001, 0.01, 0.3]),
       neighbouring=st.sampled_from(["add-remove", "replace-one"]),
       k=st.integers(1, 2000), delta=st.sampled_from([1e-12, 1e-8, 5e-6, 1e-3]))
def test_figures_never_raise_across_the_pages_space(kind, noise, sensitivity, rate, neighbouring, k,
                                                    delta) -> None:
    key, lo, hi = KINDS[kind]
    values = {key: lo * (hi / lo) ** noise, "sensitivity": sensitivity, "sampling_rate": rate,
              "neighbouring": neighbouring}
    view = mv.figures_for(kind, mv.as_values(values), k=k, delta=delta)
    assert len(view.figures) == 4
