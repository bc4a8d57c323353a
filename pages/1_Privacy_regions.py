"""Privacy regions (KOV §2-3): what any hypothesis test can achieve against DP releases."""

import streamlit as st

from dpviz import ui
from dpviz.params import DELTA0, EPS0
from dpviz.views import regions
from dpviz.views.regions import K_PAGE, KS

ui.page_setup("Privacy regions")
st.title("Privacy regions")
st.markdown(
    "An adversary sees a release and tests *“my target's record is in the database”* against *“it "
    "is not”*. Every test has a false-alarm probability P_FA and a missed-detection probability "
    "P_MD; (ε, δ)-DP means that no test can leave the region R(ε, δ) (Kairouz-Oh-Viswanath, KOV §2). "
    "The smaller the region, the closer every test is to guessing."
)
st.latex(r"\begin{aligned}&R(\varepsilon,\delta)=\{(P_{FA},P_{MD}):\\"  # short lines: fits a phone
         r"&\quad P_{FA}+e^{\varepsilon}P_{MD}\ge 1-\delta,\\"
         r"&\quad e^{\varepsilon}P_{FA}+P_{MD}\ge 1-\delta\}\\ &\text{(KOV eq. 4)}\end{aligned}")
with st.expander("How to read this plot"):
    st.markdown(
        "- The dotted diagonal P_FA + P_MD = 1 is random guessing: a release that reveals nothing "
        "keeps every test on it.\n"
        "- A shaded region is the set of (P_FA, P_MD) pairs some test *might* reach under the "
        "guarantee; its corner nearest (0, 0) is the best test the guarantee allows.\n"
        "- Composition grows the region towards (0, 0). A method whose region is smaller proves more "
        "privacy; the optimal region (KOV Thm 3.3) is the truth for the worst (ε0, δ0)-DP mechanisms.\n"
        "- Advanced composition (DRV, KOV Thm 3.2), KOV Thm 3.4 and zCDP (Steinke Thm 18/22 with the "
        "Prop. 14 conversion) prove one (ε, δ) pair per slack δ'; their regions are the theorems' own, "
        "the intersection over every slack, drawn within 1e-4 in P_FA at every P_MD and never smaller "
        "than proved.\n"
        "- Hover to read (P_FA, P_MD). Export a figure with the camera icon."
    )

eps0_box, delta0_box, k_box = st.columns(3)
values = {"eps0": ui.param_input(EPS0, eps0_box), "delta0": ui.param_input(DELTA0, delta0_box),
          "k": ui.param_input(K_PAGE, k_box)}
top = st.container()  # the k-fold figures go here, above the nested one, once every input is read
st.subheader("How the region grows with k")
st.markdown("The optimal region of the same mechanism composed k times, for several k at once (type any "
            "numbers of mechanisms): each region contains the ones for smaller k, as in KOV Fig. 2.")
values["ks"] = ui.param_input(KS)
# the two parts cached apart: a change of k redoes the k-fold regions, a change of the overlaid
# k values the nested ones
point = {"eps0": values["eps0"], "delta0": values["delta0"]}
view = regions.assemble(ui.cached(regions.at_k)(**point, k=values["k"]),
                        ui.cached(regions.nested)(**point, ks=values["ks"]), **values)
tag = ui.export.file_stem("regions", values)  # every input: scenarios never overwrite each other

with top:
    st.subheader(f"One mechanism and its {values['k']}-fold composition")
    ui.show_figure(view.figures["single"], filename=f"{tag}_single", key="fig_single")
    st.subheader("What each composition theorem guarantees")
    ui.show_figure(view.figures["methods"], filename=f"{tag}_methods", key="fig_methods")
    st.caption(
        "Advanced (DRV), KOV Thm 3.4 and zCDP (Steinke Thm 18/22) give one (ε, δ) pair per slack δ'; "
        "each theorem proves the intersection of all of them. Drawn here: that intersection, larger by "
        "at most 1e-4 in P_FA at every P_MD (a proved bound, never smaller: it never claims more privacy "
        "than the theorem). The optimal region is the trade-off curve of the composed canonical pairs "
        "(KOV eq. 16), exact."
    )
ui.show_figure(view.figures["nested"], filename=f"{tag}_nested", key="fig_nested")
ui.download_csv(view.csv["regions"], filename=f"{tag}_regions.csv", key="csv_regions")
ui.download_json(view.payload, filename=f"{tag}.json", key="json_regions")
ui.cite_box("regions")
