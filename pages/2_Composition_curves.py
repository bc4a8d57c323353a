"""Composition curves: total ε against k, δ against ε, and a value table (KOV §3, Roth lecture 4)."""

import streamlit as st

from dpviz import ui
from dpviz.params import HETERO_DELTA, HETERO_LEVELS
from dpviz.views import curves
from dpviz.views.curves import SPEC

ui.page_setup("Composition curves")
st.title("Composition curves")
st.markdown(
    "How fast does privacy degrade as releases add up? Basic composition adds the ε's; advanced "
    "composition (Dwork-Rothblum-Vadhan) grows like √k; concentrated DP (zCDP, Steinke Thm 18/22) adds "
    "ρ = Σε0²/2 and converts once; Kairouz-Oh-Viswanath give the exact optimum. "
    "Here are all five, with the gap between a theorem and the truth."
)
with st.expander("The theorems (sources in the seeds)"):
    st.markdown("**Basic** (KOV Thm 3.1; Roth lecture 4 Thm 1)")
    st.latex(r"(k\varepsilon_0,\ k\delta_0)")
    st.markdown("**Advanced** (DRV; KOV Thm 3.2; Roth Thm 6), for any δ′ > 0")
    st.latex(r"\left(\varepsilon_0\sqrt{2k\ln(1/\delta')}+k\varepsilon_0(e^{\varepsilon_0}-1),\ "
             r"k\delta_0+\delta'\right)")
    st.markdown("**KOV Thm 3.4** (closed form), with δ = 1 − (1−δ0)^k (1−δ̃)")
    st.latex(r"\min\Big\{k\varepsilon_0,\ \tfrac{k\varepsilon_0(e^{\varepsilon_0}-1)}{e^{\varepsilon_0}+1}"
             r"+\varepsilon_0\sqrt{2k\ln\big(e+\sqrt{k\varepsilon_0^2}/\tilde\delta\big)},\ "
             r"\tfrac{k\varepsilon_0(e^{\varepsilon_0}-1)}{e^{\varepsilon_0}+1}"
             r"+\varepsilon_0\sqrt{2k\ln(1/\tilde\delta)}\Big\}")
    st.markdown("**zCDP** (Steinke Prop. 16, Thm 13/18; Thm 22 with δ0 > 0): ρ = kε0²/2, converted by "
                "Prop. 14 at the best α > 1 (never worse than Remark 15's ρ + 2√(ρ ln(1/δ′)))")
    st.latex(r"\delta=k\delta_0+\inf_{\alpha>1}\frac{e^{(\alpha-1)(\alpha\rho-\varepsilon)}}{\alpha-1}"
             r"\Big(1-\frac1\alpha\Big)^{\alpha},\quad \rho=\tfrac12 k\varepsilon_0^2")
    st.markdown("**Optimal** (KOV Thm 3.3, exact for every ε, computed in log space)")
    st.latex(r"\delta(\varepsilon)=1-(1-\delta_0)^k\Big(1-\sum_{l=0}^{k}\binom{k}{l}"
             r"\frac{\max\{0,\,e^{(k-l)\varepsilon_0}-e^{\varepsilon+l\varepsilon_0}\}}"
             r"{(1+e^{\varepsilon_0})^k}\Big)")
    st.markdown("Heterogeneous (ε_i, δ_i): KOV Thm 3.5 replaces kε0, kε0² and the drift term by "
                "their sums; the exact optimum sums over the counts of each level.")
with st.expander("How to read these plots"):
    st.markdown(
        "- Lower is better: a curve below another proves more privacy for the same releases.\n"
        "- Gaps in a curve mean the method proves nothing for that target (for instance basic "
        "composition needs total δ ≥ kδ0).\n"
        "- The advanced, KOV and zCDP values are the raw theorems; the table also shows the best of them.\n"
        "- zCDP (Steinke Thm 18/22, Prop. 14) is never above advanced composition (DRV): its ½kε0² "
        "replaces kε0(e^ε0 − 1) ≥ kε0². It stays above the optimal curve: it bounds the privacy loss's "
        "moments, not its exact law.\n"
        "- The optimal curve is the truth for the worst (ε0, δ0)-DP mechanisms; real mechanisms "
        "(see *Mechanisms*) can do better."
    )

main_params = tuple(p for p in SPEC.params if p not in (HETERO_LEVELS, HETERO_DELTA))
values = ui.spec_inputs(SPEC, main_params)  # its old URL keys (none yet) first, then its inputs
homogeneous_area = st.container()  # filled below, shown above the heterogeneous inputs

st.header("Heterogeneous composition")
st.markdown("Mechanisms with different guarantees: one row per kind, with its ε, δ and how many there are "
            "(type numbers as you would write them, e.g. `1e-6`; add a row with **+** or in the empty last "
            "row, delete rows by selecting them and pressing Delete). The exact optimum sums over the "
            "counts of each kind (a few distinct kinds).")
levels = ui.levels_editor(HETERO_LEVELS)
values["hdelta"] = ui.param_input(HETERO_DELTA)

# Each part is cached on its own inputs: a change recomputes only what depends on it, and the
# log-k switch only restyles the ε-against-k figure.
common = {"eps0": values["eps0"], "delta0": values["delta0"], "delta": values["delta"]}
curve = ui.cached(curves.epsilon_series)(**common, k_max=values["k_max"])
figure_k = ui.cached(curves.epsilon_figure)(curve, delta=values["delta"], log_k=values["log_k"],
                                            eps0=values["eps0"], delta0=values["delta0"])
fixed = ui.cached(curves.at_k)(**common, k=values["k"])
hetero = None
if levels is not None:
    try:
        hetero = ui.cached(curves.heterogeneous)(levels, hdelta=values["hdelta"])
    except ValueError as exc:  # e.g. too many loss atoms for the exact heterogeneous sum
        ui.notice(exc)
values["levels"] = levels if levels is not None else ()
view = curves.assemble(**common, k_max=values["k_max"], k=values["k"], levels=values["levels"],
                       hdelta=values["hdelta"], curve=curve, figure_k=figure_k, fixed=fixed,
                       hetero=hetero or {})
if hetero is not None:  # the view's table (KOV's closed form for mixed levels is Thm 3.5)
    ui.table(view.tables["heterogeneous"], key="table_hetero")

tag = ui.export.file_stem("curves", values)  # every input: scenarios never overwrite each other
with homogeneous_area:
    ui.show_figure(view.figures["epsilon_vs_k"], filename=f"{tag}_epsilon_vs_k", key="fig_eps_k")
    ui.show_figure(view.figures["delta_vs_epsilon"],
                   filename=f"{tag}_delta_vs_epsilon", key="fig_delta_eps")
    st.subheader(f"Values at k = {values['k']:,}, total δ = {ui.unbroken(values['delta'])}")
    ui.table(view.tables["at_k"], key="table_at_k")
    best = view.summary["best_closed_form"]
    if best is not None and best[1] > 0:
        gap = 100 * (best[0] / best[1] - 1)
        st.markdown(f"Best of the closed-form theorems: ε = **{ui.format_number(best[0])}**; exact "
                    f"optimum ε = **{ui.format_number(best[1])}** (the best theorem is {gap:.1f}% higher).")
    ui.download_csv(view.csv["epsilon_vs_k"], filename=f"{tag}_epsilon_vs_k.csv", key="csv_eps_k",
                    label="Download ε against k (CSV)")
    ui.download_csv(view.csv["delta_vs_epsilon"], filename=f"{tag}_delta_vs_epsilon.csv",
                    key="csv_delta_eps", label="Download δ against ε (CSV)")
    if hetero is not None:  # the JSON holds the heterogeneous results: only with valid rows
        ui.download_json(view.payload, filename=f"{tag}.json", key="json_curves")
    ui.download_tables(view.tables, title=SPEC.title, values=values, stem=tag, key="report_curves")
    ui.cite_box("curves")
