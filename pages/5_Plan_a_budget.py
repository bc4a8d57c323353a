"""Plan a budget: the inverse questions (issue 9; Steinke seed 001 Remark 15, §4–§5, §6.7)."""

import streamlit as st

from dpviz import ui
from dpviz.views import planner
from dpviz.views.planner import SPEC

ui.page_setup("Plan a budget")
st.title("Plan a budget")
st.markdown(
    "You may spend a total (ε, δ) on k releases. **What may each release cost, and how much noise "
    "must it carry?** The answer depends on the composition theorem you rely on: basic composition "
    "divides ε by k, advanced and optimal composition by about √k (Steinke, Remark 15). Each answer "
    "below is checked by composing it forward."
)
with st.expander("How to read this page"):
    st.markdown(
        "- **Largest ε0**: the largest per-release ε0 whose k-fold composition, by that method, is "
        "within the total (ε, δ). It is shown rounded *down*, so the shown value still fits; the "
        "check column composes it forward (\"composing 100 × ε0 = … gives ε = … ≤ 1\"). The next value "
        "up, ε0 × (1 + 10⁻⁹), does not fit.\n"
        "- **kind**: *exact* when the forward ε is the true optimum for (ε0, δ0)-DP releases (KOV Thm "
        "3.3), *upper* when it is a theorem's bound: the truth may allow more. A row without a value "
        "says why: *impossible* (proven: no value fits) or *not computed* (this route could not tell, "
        "e.g. the noise needed is outside the mechanism's allowed range).\n"
        "- **Largest k**: how many releases of the given ε0 fit; k + 1 does not.\n"
        "- **Smallest noise**: the smallest σ (Gaussian, exact closed form), Laplace scale b (PLD "
        "accountant) or the largest ε0 of geometric and randomized response (exact), whose *certified* "
        "ε is within the target. Noise is rounded *up*. The noise 10⁻⁴ below it is shown with its "
        "certified ε bracket: above the target, or straddling it when the accountant cannot tell.\n"
        "- **The plot**: the standard deviation of the noise each query may carry against k, for a "
        "Laplace mechanism at each method's ε0, and for the Gaussian mechanism with its own exact "
        "accounting. Lower is better for utility; the gap between the dotted basic curve and the solid "
        "optimal one is what optimal composition buys.\n"
        "- **Database priors**: with at most C databases per person, the exact worst case allows a "
        "larger ε0 than composing all k releases (C ≥ k: no constraint). With a prior (`uniform-nonzero`, "
        "`at-least:K2`) instead of C, the rows are that prior's bounds.\n"
        "- With a sampling rate q < 1 (DP-SGD) only the Gaussian row is computed (PLD accountant), "
        "which takes up to about half a second."
    )

values = ui.param_inputs(SPEC.params)
common = {"epsilon": values["epsilon"], "delta": values["delta"]}
# Said at once (a spinner appears after half a second) and with what takes long: with q < 1 the
# Gaussian's σ is searched with the PLD accountant, 0.2-0.5 s on the 2-core benchmark machine.
subsampled = values["sampling_rate"] < 1.0
gce_args = {**common, **{key: values[key] for key in ("k", "delta0", "cap", "prior")}}
noise_args = {**common, **{key: values[key] for key in ("k", "sensitivity", "sampling_rate")}}
slow = [text for text in (  # the core's estimates, for the searches whose answers are not cached
    ui.pending(lambda: planner.noise_cost(**noise_args), planner.noise_plans, **noise_args),
    ui.pending(lambda: planner.gce_cost(**gce_args), planner.gce_plans, **gce_args)) if text]
waiting = st.empty()
if slow:  # at once, not after the spinner's half second; replaced by the tables below
    waiting.info("; ".join(slow) + "…", icon=":material/hourglass_top:")
with st.spinner("Solving the inverse questions… the subsampled Gaussian's σ is searched with the PLD "
                "accountant" if subsampled else "Solving the inverse questions…",
                show_time=True):
    eps0_p = ui.cached(planner.eps0_plans)(**common, k=values["k"], delta0=values["delta0"])
    k_p = ui.cached(planner.k_plans)(**common, eps0=values["eps0"], delta0=values["delta0"])
    noise_p = ui.cached(planner.noise_plans)(**noise_args)
    gce_p = ui.cached(planner.gce_plans)(**gce_args)
    # the utility figure's searches, each cached on its own inputs (the ε0 ones do not depend on Δ)
    ks, eps0_s = ui.cached(planner.eps0_series)(**common, delta0=values["delta0"], k_max=values["k_max"])
    gauss_s = ui.cached(planner.gaussian_series)(**common, sensitivity=values["sensitivity"],
                                                 k_max=values["k_max"])
    series = planner.noise_series(eps0_s, gauss_s, sensitivity=values["sensitivity"])  # a few divisions
    figure = ui.cached(planner.utility_figure)(ks, series, **common, sensitivity=values["sensitivity"])
waiting.empty()
view = planner.assemble(values=values, eps0_p=eps0_p, k_p=k_p, noise_p=noise_p, gce_p=gce_p, ks=ks,
                        series=series, figure=figure)
tag = ui.export.file_stem("planner", values)

st.subheader(f"Largest ε0 per release for k = {values['k']:,} at total ε = {ui.unbroken(values['epsilon'])}, "
             f"δ = {ui.unbroken(values['delta'])}")
ui.table(view.tables["eps0"], key="table_eps0")
gain = view.summary["optimal_over_basic"]
if gain is not None:
    st.markdown(f"Optimal composition allows **{gain:.3g}×** the ε0 of basic composition: "
                f"each query's Laplace noise is {gain:.3g}× smaller.")

st.subheader(f"Largest number of releases of ε0 = {ui.unbroken(values['eps0'])}")
ui.table(view.tables["k"], key="table_k")

st.subheader(f"Smallest noise for k = {values['k']:,} releases")
ui.table(view.tables["noise"], key="table_noise")

if values["prior"] == planner.NO_PRIOR:
    st.subheader(f"Database priors: at most C = {values['cap']:,} of the k = {values['k']:,} databases "
                 "per person")
    st.markdown("Each release runs on its own database and nobody is in more than C of them (Hartmann, "
                "Bindschaedler, West §V-A): the largest per-database ε0 for each bound of *Database priors*.")
else:
    st.subheader(f"Database priors: prior {ui.code(values['prior'])} over the k = {values['k']:,} databases")
    st.markdown("The adversary's prior over which databases hold the person (Hartmann, Bindschaedler, West "
                "§III, §V-B), as `gce --prior`: the largest per-database ε0 for each bound of *Database "
                "priors*. A row whose search is over the page's budget says so; the command line "
                "(`plan gce --prior …`) computes it.")
ui.table(view.tables["gce"], key="table_gce")

ui.show_figure(view.figures["noise_vs_k"], filename=f"{tag}_noise_vs_k", key="fig_noise_k")
ui.download_csv(view.csv["eps0"], filename=f"{tag}_eps0.csv", key="csv_eps0",
                label="Download largest ε0 per method (CSV)")
ui.download_csv(view.csv["k"], filename=f"{tag}_k.csv", key="csv_k",
                label="Download largest k per method (CSV)")
ui.download_csv(view.csv["noise_vs_k"], filename=f"{tag}_noise_vs_k.csv", key="csv_noise_k",
                label="Download noise against k (CSV)")
ui.download_json(view.payload, filename=f"{tag}.json", key="json_planner")
ui.download_tables(view.tables, title=SPEC.title, values=values, stem=tag, key="report_planner")
ui.cite_box("planner")
st.caption("The same answers from the command line: `python -m dpviz plan eps0 --epsilon 1 --delta 1e-5 "
           "--k 100`, `plan k …`, `plan noise gaussian …`, `plan gce …` (JSON).")
