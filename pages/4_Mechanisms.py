"""Mechanisms: how much better real mechanisms compose than the generic worst case (Steinke; KOV §4;
Meiser-Mohammadi), with certified error bars."""

import streamlit as st

from dpviz import ui
from dpviz.params import HET_ROWS
from dpviz.validation import ParameterError
from dpviz.views import mechanisms as mv

ui.page_setup("Mechanisms")
st.title("Mechanisms")
st.markdown(
    "Generic (ε, δ) composition is the worst case over *all* mechanisms with the same per-step "
    "guarantee. A concrete mechanism — Gaussian, Laplace, geometric, randomized response, possibly "
    "on a Poisson subsample — composes better. Its privacy loss distribution (PLD) says by how much: "
    "every number below is a certified interval [lower, upper] that contains the exact value."
)
with st.expander("The results used (sources in the seeds)"):
    st.markdown("**δ from the PLD** (Steinke Prop. 7), composition = convolution (Thm 9)")
    st.latex(r"\delta(\varepsilon)=\Pr[L=\infty]+\mathbb{E}_{L}\big[(1-e^{\varepsilon-L})_+\big]")
    st.markdown("**Gaussian**, μ = Δ/σ, exact (Steinke Cor. 8); k runs compose to μ√k (Cor. 10)")
    st.latex(r"\delta(\varepsilon)=\Phi\!\left(-\tfrac{\varepsilon}{\mu}+\tfrac{\mu}{2}\right)"
             r"-e^{\varepsilon}\,\Phi\!\left(-\tfrac{\varepsilon}{\mu}-\tfrac{\mu}{2}\right)")
    st.markdown("**Poisson subsampling** at rate q (Steinke Thm 29, tight)")
    st.latex(r"(\varepsilon,\delta)\ \mapsto\ \big(\ln(1+q(e^{\varepsilon}-1)),\ q\delta\big)")
    st.markdown("**Rényi DP** of the subsampled mechanism (Steinke Thm 34, integer orders λ)")
    st.latex(r"\rho'(\lambda)=\tfrac{1}{\lambda-1}\ln\sum_{j=0}^{\lambda}\binom{\lambda}{j}(1-q)^{\lambda-j}"
             r"q^{j}e^{(j-1)\rho(j)}")
    st.markdown("**Privacy buckets** (Meiser-Mohammadi Thm 1 and §4 error-correction terms): "
                "histograms of the likelihood ratio in powers of a factor f, composed by "
                "convolution and squaring; a sound upper and a lower bound.")
with st.expander("How to read this page"):
    st.markdown(
        "- The PLD band is certified: the pessimistic grid (connect-the-dots) can only over-state δ, "
        "the optimistic grid (lowered chords) can only under-state it; the band's width is the "
        "numerical error.\n"
        "- *Generic optimal* is KOV Thm 3.3 for the per-step (ε0, δ0) the mechanism satisfies (for "
        "the Gaussian, δ0 = δ/(2k) is spent per step): the best any composition theorem can say.\n"
        "- Rényi DP gives an upper bound only; buckets give both bounds, loose when squaring has made "
        "the bucket factor coarse (a '—' means no finite certified value)."
    )

kind_label = ui.choice_input("Mechanism", list(mv.KINDS), key="mechanism", default="Gaussian")
kind = mv.KINDS[kind_label]
own = mv.PARAMS[kind]  # one or two parameters; the shared ones keep their slots (see param_inputs)
slots = (own[0], own[1] if len(own) > 1 else None, mv.K, mv.RATE, mv.DELTA)
values = ui.param_inputs(slots, per_row=3)
k, delta = values["mech_k"], values["mech_delta"]

try:
    spec = mv.make_spec(kind, values)
    with st.spinner("Composing…"):
        result = ui.cached(mv.build)(spec, k=k, delta=delta)
except ParameterError as exc:
    ui.notice(exc)
    st.stop()

tag = ui.export.file_stem("mechanisms", {"mechanism": kind, **values})  # every input
st.subheader(f"ε at total δ = {ui.unbroken(delta)} after k = {k:,} runs")
ui.table(result.tables["comparison"], key="table_comparison")
pld = result.payload["results"]["pld"]
gen = result.payload["results"]["generic"]
if pld["upper"] is not None and gen["upper"]:
    st.markdown(f"This mechanism: ε ∈ **[{ui.format_number(pld['lower'], down=True)}, "
                f"{ui.format_number(pld['upper'])}]**; generic optimal "
                f"composition of its per-step guarantee: ε = **{ui.format_number(gen['upper'])}** "
                f"({gen['upper'] / max(pld['upper'], 1e-300):.3g}× larger).")

left, right = st.columns(2)
with left:
    ui.show_figure(result.figures["histogram"], filename=f"{tag}_histogram", key="fig_pld")
with right:
    ui.show_figure(result.figures["region"], filename=f"{tag}_region", key="fig_region")
ui.show_figure(result.figures["delta"], filename=f"{tag}_delta", key="fig_delta")
ui.show_figure(result.figures["epsilon_vs_k"], filename=f"{tag}_epsilon_vs_k", key="fig_eps_k")
ui.download_csv(result.csv["delta_vs_epsilon"], filename=f"{tag}_delta_vs_epsilon.csv", key="csv_delta",
                label="Download δ(ε) band (CSV)")
ui.download_json(result.payload, filename=f"{tag}.json", key="json_mech")

st.header("Heterogeneous composition")
st.markdown("Mechanisms with different (ε_i, δ_i): one row per kind with its count (type numbers as "
            "you would write them, e.g. `1e-6`; add a row with **+** or in the empty last row, delete rows "
            "by selecting them and pressing Delete). The exact optimum sums over the counts of the "
            "canonical pairs (a few distinct rows); the PLD route scales to many rows; KOV Thm 3.5 is the "
            "closed form.")
hdelta = ui.param_input(mv.HDELTA)
levels = ui.levels_editor(HET_ROWS)
if levels is not None:
    rows = [{"ε": lv.epsilon, "δ": lv.delta, "count": lv.count} for lv in levels]
    try:
        ui.table(ui.cached(mv.heterogeneous)(rows, delta=hdelta), key="table_hetero")
    except ParameterError as exc:
        ui.notice(exc)
