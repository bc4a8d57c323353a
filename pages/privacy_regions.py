"""Privacy regions (KOV §2-3): what any hypothesis test can achieve against DP releases."""

import streamlit as st

from dpviz import ui
from dpviz.composition.levels import homogeneous
from dpviz.figures.regions import region_figure, region_values
from dpviz.figures.style import style
from dpviz.regions import intersection_boundary, method_region
from dpviz.ui_params import DELTA0, EPS0, K

st.title("Privacy regions")
st.markdown(
    "An adversary sees a release and tests *“my target's record is in the database”* against *“it "
    "is not”*. Every test has a false-alarm probability P_FA and a missed-detection probability "
    "P_MD; (ε, δ)-DP means that no test can leave the region R(ε, δ) (Kairouz-Oh-Viswanath, KOV §2). "
    "The smaller the region, the closer every test is to guessing."
)
st.latex(r"R(\varepsilon,\delta)=\{(P_{FA},P_{MD}):\ P_{FA}+e^{\varepsilon}P_{MD}\ge 1-\delta,\ "
         r"e^{\varepsilon}P_{FA}+P_{MD}\ge 1-\delta\}\quad\text{(KOV eq. 4)}")
with st.expander("How to read this plot"):
    st.markdown(
        "- The dotted diagonal P_FA + P_MD = 1 is random guessing: a release that reveals nothing "
        "keeps every test on it.\n"
        "- A shaded region is the set of (P_FA, P_MD) pairs some test *might* reach under the "
        "guarantee; its corner nearest (0, 0) is the best test the guarantee allows.\n"
        "- Composition grows the region towards (0, 0). A method whose region is smaller proves more "
        "privacy; the optimal region (KOV Thm 3.3) is the truth for the worst (ε0, δ0)-DP mechanisms.\n"
        "- Hover to read (P_FA, P_MD). Export a figure with the camera icon."
    )

c1, c2, c3 = st.columns(3)
eps0 = ui.param_input(EPS0, c1)
delta0 = ui.param_input(DELTA0, c2)
k = ui.param_input(K, c3)
levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
region = ui.cached(method_region)

st.subheader(f"One mechanism and its {k}-fold composition")
single = intersection_boundary([eps0], [delta0])
composed = region("optimal", levels)
fig = region_figure({"single": single, "optimal": composed},
                    title=f"R({eps0:g}, {delta0:g}) and the optimal {k}-fold region",
                    labels={"single": f"One ({eps0:g}, {delta0:g})-DP mechanism",
                            "optimal": f"{k}-fold composition, optimal (KOV Thm 3.3)"})
ui.show_figure(fig, filename=f"dpviz_region_eps{eps0:g}_delta{delta0:g}_k{k}", key="fig_single")

st.subheader("What each composition theorem guarantees")
methods = ("basic", "advanced", "kov", "optimal")
regions = {m: region(m, levels) for m in methods}
fig2 = region_figure(regions, title=f"Regions proved for k = {k} mechanisms, each ({eps0:g}, {delta0:g})-DP")
ui.show_figure(fig2, filename=f"dpviz_regions_methods_eps{eps0:g}_delta{delta0:g}_k{k}", key="fig_methods")
st.caption(
    "Advanced (DRV) and KOV Thm 3.4 give one (ε, δ) pair per slack δ'; their region is the "
    "intersection over a sweep of δ' from 1e-300 to 1, itself a valid guarantee. The optimal region "
    "is the trade-off curve of the composed canonical pairs (KOV eq. 16), exact."
)

xs, _ = region_values(regions["optimal"])
columns = {"P_FA": xs}
columns.update({f"P_MD_min_{m}": region_values(regions[m])[1] for m in methods})
ui.download_csv(columns, filename=f"dpviz_regions_eps{eps0:g}_delta{delta0:g}_k{k}.csv", key="csv_regions")
ui.download_json({"page": "privacy_regions", "eps0": eps0, "delta0": delta0, "k": k,
                  "lower_boundary_vertices": {m: {"P_FA": regions[m].p_fa, "P_MD": regions[m].p_md}
                                              for m in methods},
                  "legend": {m: style(m).label for m in methods}},
                 filename=f"dpviz_regions_eps{eps0:g}_delta{delta0:g}_k{k}.json", key="json_regions")
