"""Composition curves: total ε against k, δ against ε, and a value table (KOV §3, Roth lecture 4)."""

import numpy as np
import streamlit as st

from dpviz import ui
from dpviz.composition import METHODS, homogeneous
from dpviz.composition.curves import comparison, delta_vs_epsilon, epsilon_vs_k, k_grid
from dpviz.composition.levels import sum_epsilon
from dpviz.figures.curves import delta_vs_epsilon_figure, epsilon_vs_k_figure
from dpviz.figures.style import style
from dpviz.ui_params import CURVES_DELTA, CURVES_DELTA0, EPS0, HETERO_DELTA, HETERO_LEVELS, K_MAX, K

st.title("Composition curves")
st.markdown(
    "How fast does privacy degrade as releases add up? Basic composition adds the ε's; advanced "
    "composition (Dwork-Rothblum-Vadhan) grows like √k; Kairouz-Oh-Viswanath give the exact optimum. "
    "Here are all four, with the gap between a theorem and the truth."
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
        "- The advanced and KOV values are the raw theorems; the table also shows the best of them.\n"
        "- The optimal curve is the truth for the worst (ε0, δ0)-DP mechanisms; real mechanisms "
        "(see *Mechanisms*) can do better."
    )

c1, c2, c3 = st.columns(3)
eps0 = ui.param_input(EPS0, c1)
delta0 = ui.param_input(CURVES_DELTA0, c2)
delta = ui.param_input(CURVES_DELTA, c3)
c4, c5, c6 = st.columns(3)
k_max = ui.param_input(K_MAX, c4)
k = ui.param_input(K, c5)
log_k = ui.toggle_input("log k axis", key="log_k", default=True, container=c6)

labels = {m: style(m).label for m in METHODS}
ks = tuple(int(v) for v in k_grid(k_max, log=log_k))
curve = ui.cached(epsilon_vs_k)(eps0=eps0, delta0=delta0, delta=delta, ks=ks)
ui.show_figure(epsilon_vs_k_figure(curve.x, curve.y, delta=delta, log_x=log_k),
               filename=f"dpviz_epsilon_vs_k_eps{eps0:g}_delta0{delta0:g}_delta{delta:g}", key="fig_eps_k")

levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
eps_grid = tuple(np.linspace(0.0, max(sum_epsilon(levels), 1e-9) * 1.05, 160))
dcurve = ui.cached(delta_vs_epsilon)(levels, epsilons=eps_grid)
ui.show_figure(delta_vs_epsilon_figure(dcurve.x, dcurve.y, k=k),
               filename=f"dpviz_delta_vs_epsilon_eps{eps0:g}_delta0{delta0:g}_k{k}", key="fig_delta_eps")

st.subheader(f"Values at k = {k:,}, total δ = {delta:g}")
results = ui.cached(comparison)(levels, delta=delta)
st.table(ui.guarantee_rows(results, labels))
best = min((g.epsilon for key, g in results.items() if key != "optimal" and g.feasible), default=None)
opt = results["optimal"]
if best is not None and opt.feasible:
    st.markdown(f"Best of the closed-form theorems: ε = **{ui.format_number(best)}**; exact optimum "
                f"ε = **{ui.format_number(opt.epsilon)}** ({100 * (best / opt.epsilon - 1):.1f}% higher)."
                if opt.epsilon else "")

cols = {"k": curve.x}
cols.update({f"epsilon_{m}": curve.y[m] for m in METHODS})
ui.download_csv(cols, filename=f"dpviz_epsilon_vs_k_eps{eps0:g}_delta0{delta0:g}_delta{delta:g}.csv",
                key="csv_eps_k", label="Download ε against k (CSV)")
dcols = {"epsilon": dcurve.x}
dcols.update({f"delta_{m}": dcurve.y[m] for m in METHODS})
ui.download_csv(dcols, filename=f"dpviz_delta_vs_epsilon_eps{eps0:g}_delta0{delta0:g}_k{k}.csv",
                key="csv_delta_eps", label="Download δ against ε (CSV)")

st.subheader("Heterogeneous composition")
st.markdown("Mechanisms with different guarantees: one row `ε:δ:count` per kind, separated by commas. "
            "The exact optimum sums over the counts of each kind (a few distinct kinds).")
h1, h2 = st.columns([2, 1])
hetero = ui.param_input(HETERO_LEVELS, h1)
hdelta = ui.param_input(HETERO_DELTA, h2)
try:
    hresults = ui.cached(comparison)(hetero, delta=hdelta)
except ValueError as exc:  # too many loss atoms for the exact sum: say so, keep the page
    st.error(str(exc))
else:
    st.table(ui.guarantee_rows(hresults, labels))
