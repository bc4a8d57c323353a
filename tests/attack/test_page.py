"""AppTest of the attack lab: the headline numbers, the figure's layers, URL inputs, bad input named,
the Alice example's guesses and error rates, and downloads."""

from __future__ import annotations

import pytest

from tests.app.helpers import assert_clean, errors, figures, run_page, tables, trace_names

PAGE = "pages/6_Attack_lab.py"


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_page_opens_with_both_epsilons_and_the_ratio():
    at = run_page(PAGE)
    assert_clean(at)
    assert not errors(at)
    m = metrics(at)
    shown, proven = float(m["The attack shows ε ≥"]), float(m["The guarantee proves ε ≤"])
    assert 0 < shown <= proven
    assert m["Ratio"].endswith("%")
    text = " ".join(x.value for x in at.markdown)
    assert "This attack shows ε ≥" in text and "the guarantee proves ε ≤" in text


def test_figure_draws_the_attack_over_the_region():
    at = run_page(PAGE)
    names = " ".join(trace_names(figures(at)[0]))
    for label in ("Exact trade-off curve", "Proven: R(", "Clopper", "likelihood-ratio", "Certified test"):
        assert label in names, label


def test_url_inputs_choose_the_mechanism_and_the_run():
    at = run_page(PAGE, mechanism="gaussian", sigma="2", k="4", trials="5000", seed="3", delta="0.01")
    assert_clean(at)
    assert not errors(at)
    fig = figures(at)[0]
    assert "Gaussian" in fig["layout"]["title"]["text"] and "5,000 trials" in fig["layout"]["title"]["text"]
    again = run_page(PAGE, mechanism="gaussian", sigma="2", k="4", trials="5000", seed="3", delta="0.01")
    other = run_page(PAGE, mechanism="gaussian", sigma="2", k="4", trials="5000", seed="4", delta="0.01")
    assert metrics(again) == metrics(at)
    assert figures(other)[0]["data"] != fig["data"], "another seed, other trials"


@pytest.mark.parametrize("params,field", [
    ({"trials": "5"}, "trials per hypothesis N"),
    ({"mechanism": "canonical", "delta0": "0.01", "sampling_rate": "0.1", "k": "10000", "trials": "100000"},
     "trials per hypothesis N"),  # mass at +∞: drawn step by step, capped (Laplace here is fine, §14.5)
    ({"confidence": "2"}, "confidence"),
    ({"mechanism": "gaussian", "prior": "uniform"}, "databases holding the target"),
    ({"mechanism": "gaussian", "sigma": "-1"}, "noise σ"),
    ({"sampling_rate": "2"}, "sampling rate q"),
])
def test_bad_input_is_named_and_the_example_still_shows(params, field):
    """The message names the label the user sees (issue 19), whether the input's own check or the
    attack's cross-check refused it."""
    at = run_page(PAGE, **params)
    assert_clean(at)
    msgs = errors(at)
    assert msgs and msgs[0].startswith(f"{field} must be"), msgs
    assert any("Alice" in h.value for h in at.subheader)
    assert len(figures(at)) >= 1  # the worked example's figure


def test_alice_example_shows_guesses_and_both_error_rates():
    at = run_page(PAGE, alice_eps0="1", alice_k="5", alice_t="3")
    assert_clean(at)
    trials, rates = tables(at)[:2]
    assert set(trials["Alice is"]) == {"in", "out"}
    yes = trials["“yes” answers"].str.split(" of ").str[0].astype(int)
    guessed_in = trials["attacker guesses"] == "in"
    assert (guessed_in == (yes >= 3)).all(), "the attacker's rule: in from 3 “yes”"
    assert ((trials["attacker guesses"] == trials["Alice is"]) == trials["right?"].eq("✓")).all()
    assert len(rates) == 2 and "false alarm" in rates["error"][0] and "missed detection" in rates["error"][1]
    before = rates["observed"].tolist()
    at.text_input(key="alice_t").set_value("4").run()
    assert_clean(at)
    after = tables(at)[1]["observed"].tolist()
    assert after != before, "a stricter rule trades false alarms for missed detections"


def test_downloads_and_regions_link():
    at = run_page(PAGE)
    labels = [b.proto.label for b in at.get("download_button")]
    assert any("CSV" in x for x in labels) and any("JSON" in x for x in labels)
    text = " ".join(x.value for x in at.markdown)
    assert "/Privacy_regions?" in text


def test_every_page_lists_the_lab_in_its_sidebar():
    # the navigation is drawn from dpviz.ui.VIEWS on every page (not only the home page's link);
    # under AppTest (no navigation) each link is its label in bold (dpviz.ui.page_link)
    at = run_page("pages/1_Privacy_regions.py")
    labels = [el.proto.label for el in at.sidebar.get("page_link")] + [m.value for m in at.sidebar.markdown]
    assert "Plan a budget" in " ".join(labels)
    assert labels[-1].strip("*") == "Attack lab", labels


def test_many_thresholds_draw_a_line_that_leaves_the_curve_visible():
    # looking at a subsampled Gaussian (k = 100) showed 2,000 markers hiding the trade-off curve
    at = run_page(PAGE, mechanism="gaussian", sigma="1", sampling_rate="0.01", k="100", trials="20000",
                  seed="1", delta="1e-5")
    attack = next(t for t in figures(at)[0]["data"] if t.get("name", "").startswith("Attack"))
    assert attack["mode"] == "lines"
    few = run_page(PAGE, k="3")  # the canonical pair at k = 3: four thresholds, each marked
    attack = next(t for t in figures(few)[0]["data"] if t.get("name", "").startswith("Attack"))
    assert attack["mode"] == "lines+markers"


def test_certified_above_proven_says_it_is_chance():
    """The fuzzer's case (tests/attack/test_cli.py, seed 8 since issue 20): the headline explains it,
    the numbers stay."""
    at = run_page(PAGE, mechanism="canonical", eps0="1", k="2", trials="171", seed="8", delta="0.1",
                  confidence="0.5")
    assert_clean(at)
    assert not errors(at)
    m = metrics(at)
    assert float(m["The attack shows ε ≥"]) > float(m["The guarantee proves ε ≤"])
    text = " ".join(x.value for x in at.markdown)
    assert "wrong with probability at most 1 − confidence = 0.5" in text


def test_legend_names_the_test_that_was_run():
    """Laplace is attacked through binned loss windows (MATH §14.5): the legend and caption say so,
    and do not call it the likelihood-ratio test, which the canonical pair's curve is."""
    at = run_page(PAGE, mechanism="laplace", scale="2", k="20", trials="5000", seed="1", delta="0.01")
    assert_clean(at)
    assert not errors(at)
    names = " ".join(trace_names(figures(at)[0]))
    assert "test on the binned privacy loss" in names and "likelihood-ratio" not in names
    assert any("Black: the test on the binned privacy loss" in c.value for c in at.caption)
    canonical = " ".join(trace_names(figures(run_page(PAGE, mechanism="canonical"))[0]))
    assert "likelihood-ratio test" in canonical and "binned" not in canonical


def test_an_old_link_with_q_0_opens_without_subsampling():
    """``sampling_rate=0`` meant no subsampling here before issue 19; today q = 1 does."""
    at = run_page(PAGE, mechanism="gaussian", sigma="1", sampling_rate="0", k="10", trials="1000")
    assert_clean(at)
    assert not errors(at), errors(at)
    assert at.text_input(key="sampling_rate").value == "1"


def _alice_trials(seed: int):
    """The worked example's first trials at its defaults, drawn with ``seed`` (from the view)."""
    from dpviz.views import attack as av

    values = {p.key: p.check(p.default) for p in av.ALICE_PARAMS}
    attack = av.alice_attack(alice_eps0=values["alice_eps0"], alice_k=values["alice_k"], seed=seed)
    return av.alice(av.run(attack), t=values["alice_t"]).tables["trials"]


def _shown_trials(at) -> list[dict[str, str]]:
    return tables(at)[0].to_dict("records")


def test_the_example_draws_with_the_seed_the_lab_shows_now():
    """The lab and the worked example are two fragments: a change of the lab's seed reruns both (its
    callback), and the example reads the seed from the lab's input, never from an older run."""
    at = run_page(PAGE)
    default = int(next(w.value for w in at.text_input if w.key == "seed"))
    assert _shown_trials(at) == _alice_trials(default)
    assert _alice_trials(default + 6) != _alice_trials(default), "another seed, other first trials"
    at.text_input(key="seed").set_value(str(default + 6)).run()
    assert_clean(at)
    assert _shown_trials(at) == _alice_trials(default + 6)
    assert f"seed {default + 6}" in " ".join(c.value for c in at.caption)
    at.text_input(key="seed").set_value("not a seed").run()  # the lab runs with its default, the example too
    assert _shown_trials(at) == _alice_trials(default)


def test_a_run_answered_before_shows_no_progress_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rerun whose trials are cached (here the worked example's rule, which reruns no trials)
    reads both runs at once: no progress bar is drawn and no worker thread started (issue 20), while
    a run not yet answered still shows its bar."""
    from concurrent.futures import ThreadPoolExecutor

    import streamlit as st
    import streamlit.delta_generator as dg

    drawn: list[str] = []

    def counting(draw):
        def counted(*args, **kwargs):
            drawn.append(kwargs.get("text", ""))
            return draw(*args, **kwargs)
        return counted

    monkeypatch.setattr(dg.DeltaGenerator, "progress", counting(dg.DeltaGenerator.progress))
    monkeypatch.setattr(st, "progress", counting(st.progress))
    monkeypatch.setattr(ThreadPoolExecutor, "submit", counting(ThreadPoolExecutor.submit))
    at = run_page(PAGE, seed="913")  # a seed no other test runs: both runs are new
    assert_clean(at)
    assert sum(text.startswith("Sampling") for text in drawn) >= 2, drawn  # the lab's bar and the example's
    shown = metrics(at)
    drawn.clear()
    at.text_input(key="alice_t").set_value("2").run()
    assert_clean(at)
    assert drawn == []
    assert metrics(at) == shown
