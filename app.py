"""dpviz — Streamlit entry point and home page.

Streamlit finds the views in ``pages/`` when the server starts, so a shared deep link
works even as the first request after a restart (``st.navigation`` pages are only
known after the entry script has run once, streamlit#9624: a cold deep link showed
"Page not found"). ``dpviz.ui.page_setup`` draws the sidebar from ``dpviz.ui.VIEWS``.
"""

import streamlit as st

from dpviz import ui
from dpviz.views import curves
from dpviz.views.curves import SPEC as CURVES

ui.page_setup("Home")
st.title("dpviz — differential privacy under composition")
st.markdown(
    "Every release of a differentially private statistic leaks a little. **How much do k releases "
    "leak together?** dpviz answers with the exact optimum and with the classic theorems, draws "
    "what an adversary's hypothesis test can achieve, and shows how knowledge about *which* "
    "databases hold a person, and the choice of mechanism, changes the answer."
)

home = {key: v for key, v in CURVES.defaults().items() if key in ("eps0", "delta0", "delta", "k_max")}
curve = ui.cached(curves.epsilon_series)(**home)  # the same cached numbers as Composition curves
figure = ui.cached(curves.epsilon_figure)(curve, delta=home["delta"], log_k=CURVES.defaults()["log_k"],
                                          eps0=home["eps0"], delta0=home["delta0"])
ui.show_figure(figure, filename="dpviz_home_epsilon_vs_k", key="fig_home")
st.caption("Releases that are each 0.1-DP, total δ = 1e-5: what k of them cost by each composition theorem. "
           "The exact optimum (KOV Thm 3.3, solid blue) is far below basic composition (dotted); "
           "explore it in *Composition curves*.")

st.subheader("The views")
ui.page_link("pages/1_Privacy_regions.py", label="Privacy regions", icon=":material/square:")
st.markdown(
    "An (ε, δ)-DP mechanism confines every test that tries to tell two neighbouring databases apart "
    "to a region of (false alarm, missed detection) pairs. See that region for one mechanism, watch "
    "it grow under k-fold composition, and compare the regions that the basic, advanced, KOV and "
    "optimal composition theorems guarantee (Kairouz, Oh, Viswanath, Figs. 2-3)."
)
ui.page_link("pages/2_Composition_curves.py", label="Composition curves", icon=":material/show_chart:")
st.markdown(
    "Total ε against the number of mechanisms k at a fixed total δ, and δ against ε at fixed k, for "
    "the four methods; a value table with sources; homogeneous and heterogeneous compositions; CSV "
    "downloads. The optimal curve is exact (KOV Thm 3.3), computed in log space up to k = 10⁶."
)

ui.page_link("pages/3_Database_priors.py", label="Database priors", icon=":material/database:")
st.markdown(
    "Your k releases run on k different databases, and nobody is in all of them: a patient spends at "
    "most 365 nights in hospital, a customer belongs to one subsidiary. The generalized composition "
    "experiment (Hartmann, Bindschaedler, West) turns such constraints and an adversary's prior into "
    "smaller bounds; dpviz shows the paper's bounds, the classic worst case and the exact worst case."
)

ui.page_link("pages/4_Mechanisms.py", label="Mechanisms", icon=":material/tune:")
st.markdown(
    "Generic (ε, δ) composition is the worst case over all mechanisms; real ones compose better. "
    "Pick Gaussian, Laplace, geometric or randomized response, optionally Poisson-subsampled as in "
    "DP-SGD, and see the privacy loss distribution, δ(ε) with a certified [lower, upper] band, and a "
    "comparison of PLD accounting, privacy buckets, Rényi DP and closed forms."
)

ui.page_link("pages/5_Plan_a_budget.py", label="Plan a budget", icon=":material/calculate:")
st.markdown(
    "The reverse question: you may spend a total (ε, δ) on k releases. The largest per-release ε0 and "
    "the largest k for each composition method, the smallest Gaussian σ, Laplace scale or DP-SGD noise "
    "multiplier, each checked by composing it forward; and the noise per query against k, one curve per "
    "method. Also on the command line: `python -m dpviz plan …`."
)

ui.page_link("pages/6_Attack_lab.py", label="Attack lab", icon=":material/target:")
st.markdown(
    "Run the adversary's hypothesis test and watch it land inside the region: the membership attack on "
    "the canonical pair, randomized response, Laplace or the (subsampled) Gaussian, its error rates with "
    "confidence boxes, and the ε it certifies beside the ε the guarantee proves. With a worked example "
    "for teaching: is Alice in the survey? Also on the command line: `python -m dpviz attack …`."
)

st.subheader("Conventions")
st.markdown(
    "- **Exact** numbers are the true optimum (to floating point); **upper** bounds are sound "
    "and never rounded down.\n"
    "- Every number names its source: the seed paper and theorem.\n"
    "- Every input lives in the address bar: copy the URL to share the exact view.\n"
    "- The same method has the same colour and line style on every page."
)
