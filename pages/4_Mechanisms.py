"""Mechanisms: how much better real mechanisms compose than the generic worst case (Steinke; KOV §4;
Meiser-Mohammadi), with certified error bars. Inputs → ``dpviz.views.mechanisms`` → display."""

import pandas as pd
import streamlit as st

from dpviz import ui
from dpviz.params import HET_ROWS, SAMPLING_SCHEMES, in_words
from dpviz.validation import ParameterError
from dpviz.views import mechanisms as mv

ui.page_setup("Mechanisms")
ui.migrate_url("mechanisms", mv.legacy_query)  # an old shared link: today's keys, then rerun

st.title("Mechanisms")
st.markdown(
    "Generic (ε, δ) composition is the worst case over *all* mechanisms with the same per-step "
    "guarantee. A concrete mechanism — Gaussian, Laplace, geometric, randomized response, possibly "
    "on a Poisson or fixed-size subsample — composes better. Its privacy loss distribution (PLD) says by "
    "how much: every number below is a certified interval [lower, upper] that contains the exact value."
)
with st.expander("The results used (sources in the seeds)"):
    st.markdown("**δ from the PLD** (Steinke Prop. 7), composition = convolution (Thm 9)")
    st.latex(r"\delta(\varepsilon)=\Pr[L=\infty]+\mathbb{E}_{L}\big[(1-e^{\varepsilon-L})_+\big]")
    st.markdown("**Gaussian**, μ = Δ/σ, exact (Steinke Cor. 8); k runs compose to μ√k (Cor. 10)")
    st.latex(r"\delta(\varepsilon)=\Phi\!\left(-\tfrac{\varepsilon}{\mu}+\tfrac{\mu}{2}\right)"
             r"-e^{\varepsilon}\,\Phi\!\left(-\tfrac{\varepsilon}{\mu}-\tfrac{\mu}{2}\right)")
    st.markdown("**Poisson subsampling** at rate q, add/remove neighbours (Steinke Thm 29, tight); "
                "replace-one neighbours: the pair ((1−q)P0 + qP1, (1−q)P0 + qP2) (Steinke §6.2)")
    st.latex(r"(\varepsilon,\delta)\ \mapsto\ \big(\ln(1+q(e^{\varepsilon}-1)),\ q\delta\big)")
    st.markdown("**Rényi DP** of the subsampled mechanism (Steinke Thm 34, integer orders λ)")
    st.latex(r"\rho'(\lambda)=\tfrac{1}{\lambda-1}\ln\sum_{j=0}^{\lambda}\binom{\lambda}{j}(1-q)^{\lambda-j}"
             r"q^{j}e^{(j-1)\rho(j)}")
    st.markdown("**Privacy buckets** (Meiser-Mohammadi Thm 1 and §4 error-correction terms): "
                "histograms of the likelihood ratio in powers of a factor f, composed by "
                "convolution and squaring; a sound upper and a lower bound.")
with st.expander("How to read this page"):
    st.markdown(
        "- The first answer comes from the cheap routes (closed form, pure kε0, Rényi DP, the generic "
        "optimum); the PLD grid and privacy buckets then refine it. The headline is the smallest sound "
        "upper bound of all routes and the largest certified lower bound, with the routes that gave them.\n"
        "- The PLD band is certified: the pessimistic grid (connect-the-dots) can only over-state δ, "
        "the optimistic grid can only under-state it; the band's width is the numerical error.\n"
        "- *Generic optimal* is KOV Thm 3.3 for the per-step (ε0, δ0) the mechanism satisfies (for "
        "the Gaussian, δ0 = δ/(2k) is spent per step): the best any composition theorem can say.\n"
        "- Rényi DP gives an upper bound only; buckets give both bounds, loose when squaring has made "
        "the bucket factor coarse (a '—' means no finite certified value; the note says why)."
    )

# --- inputs: every key is the CLI flag of `python -m dpviz mechanism` ----------------------------
# the question first: the mechanism, the mix and their figures all answer it, so a change of it
# reruns the page, while a change of the mechanism's own inputs reruns its fragment alone (issue 20)
c1, c2, c3 = st.columns(3)
with c1:
    solve = ui.choice_input("answer", list(mv.SOLVE_OPTIONS), key="solve", default=mv.SOLVE.default,
                            help=mv.SOLVE.help)
target_param = mv.DELTA if solve == "epsilon" else mv.EPSILON
target = ui.param_input(target_param, c2)
target_kw = {"delta": target} if solve == "epsilon" else {"epsilon": target}
q_name, t_name = ("ε", "δ") if solve == "epsilon" else ("δ", "ε")


def mechanism_inputs() -> tuple[str, tuple, dict, bool]:
    """The mechanism, its parameters (each input in its own slot, ``ui.param_inputs``), k, the
    sampling and the buckets toggle: (kind, its own parameters, every value, compare)."""
    kind = ui.choice_input("Mechanism", list(mv.KINDS.values()), key="mechanism",
                           default=mv.MECHANISM.default, help=mv.MECHANISM.help)
    own = mv.mechanism_params(kind)
    # the mechanism's own parameters, padded to two, then k
    slots = (*own, *(None,) * max(0, 2 - len(own)), mv.K)
    values = ui.param_inputs(slots, per_row=3)
    c1, c2, c3 = st.columns(3)
    values["sampling"] = ui.choice_input(mv.SAMPLING.label, list(SAMPLING_SCHEMES), key="sampling",
                                         default=mv.SAMPLING.default, container=c1, help=mv.SAMPLING.help)
    if values["sampling"] == "fixed-size":  # m of n without replacement: replace-one by definition
        values["batch_size"] = ui.param_input(mv.BATCH_SIZE, c2)
        values["dataset_size"] = ui.param_input(mv.DATASET_SIZE, c3)
        c1.caption("Neighbouring: replace-one (a fixed-size batch keeps its size). Bounded like Poisson "
                   "sampling at q = m/n (Balle-Barthe-Gaboardi 2018).")
    else:
        values["sampling_rate"] = ui.param_input(mv.SAMPLING_RATE, c2)
        values["neighbouring"] = ui.choice_input("neighbouring relation", list(mv.registry.NEIGHBOURING),
                                                 key="neighbouring", default=mv.NEIGHBOURING.default,
                                                 container=c3, help=mv.NEIGHBOURING.help)
    compare = ui.param_input(mv.COMPARE)
    return kind, own, values, compare


@st.fragment(key="mechanism_single")
def single_mechanism() -> None:
    """The chosen mechanism's inputs, first answer, refined routes' table, figures and downloads: a
    change of one of its inputs reruns this fragment alone (issue 20), not the explanations, the
    mix and the heterogeneous table below (28 % of a rerun's CPU), which do not depend on them."""
    kind, own, values, compare = mechanism_inputs()
    k = values["k"]
    try:
        mv.make_mechanism(kind, values)  # a bad combination is named before anything is computed
        args = (kind, mv.as_values({key: v for key, v in values.items() if key != "k"}))
        first = ui.cached(mv.quick_for)(*args, k=k, **target_kw)
    except ParameterError as exc:
        ui.notice(in_words(exc, (*own, mv.K, mv.SAMPLING_RATE, mv.BATCH_SIZE, mv.DATASET_SIZE, target_param)))
        return  # the mix and the heterogeneous table below still answer

    tag = ui.export.file_stem("mechanisms", {"mechanism": kind, "solve": solve, **values, **target_kw})
    st.subheader(f"{q_name} at total {t_name} = {ui.unbroken(target)} after k = {k:,} runs")
    headline = st.empty()  # the first sound answer now, the refined one below
    headline.markdown(mv.headline(mv.best(first), solve=solve, refined=False))
    buckets = compare and solve == "epsilon"
    refining = "the PLD grid and privacy buckets" if buckets else "the PLD grid"
    # said at once when the core estimates more than about a second and the answer is not cached
    slow = ui.pending(lambda: mv.refine_cost_for(*args, k=k, first=first, compare=buckets, **target_kw),
                      mv.refine_for, *args, k=k, compare=buckets, **target_kw)
    with st.status(f"{slow}…" if slow else f"Refining with {refining}…", expanded=False) as status:
        try:
            result = ui.cached(mv.refine_for)(*args, k=k, compare=buckets, **target_kw)
        except ParameterError as exc:
            status.update(label="Refinement failed", state="error")
            ui.notice(exc)
            return
        names = {"pld": "PLD grid", "buckets": "privacy buckets"}
        done = ", ".join(names[key] for key in result.summary["refined"]) or "none needed: a route is exact"
        status.update(label=f"Refined ({done}); computed in {result.summary['seconds']:.2f} s",
                      state="complete")
    headline.markdown(mv.headline(result.summary, solve=solve, refined=True))
    ui.table(result.tables["comparison"], key="table_comparison")
    with st.spinner("Drawing the figures (a coarser grid: as certified, only wider)…", show_time=True):
        try:
            drawn = ui.cached(mv.figures_for)(*args, k=k, h=result.summary["h"], answer=mv.answer_of(result),
                                              **target_kw)
        except ParameterError as exc:  # the table above stands; say why there are no figures
            ui.notice(exc)
            return

    left, right = st.columns(2)
    with left:
        ui.show_figure(drawn.figures["histogram"], filename=f"{tag}_histogram", key="fig_pld")
    with right:
        ui.show_figure(drawn.figures["region"], filename=f"{tag}_region", key="fig_region")
    ui.show_figure(drawn.figures["delta"], filename=f"{tag}_delta", key="fig_delta")
    ui.show_figure(drawn.figures["epsilon_vs_k"], filename=f"{tag}_epsilon_vs_k", key="fig_eps_k")
    d1, d2, d3 = st.columns(3)
    with d1:
        ui.download_csv(result.csv["routes"], filename=f"{tag}_routes.csv", key="csv_routes",
                        label="Routes (CSV)")
    with d2:
        ui.download_csv(drawn.csv["delta_vs_epsilon"], filename=f"{tag}_delta_vs_epsilon.csv",
                        key="csv_delta", label="δ(ε) band (CSV)")
    with d3:
        ui.download_json(result.payload, filename=f"{tag}.json", key="json_mech", label="All results (JSON)")
    shown = {"mechanism": kind, "solve": solve, **values, **target_kw}
    ui.download_tables(result.tables, title=mv.SPEC.title, values=shown, stem=tag, key="report_mech")


single_mechanism()

st.header("Mechanism mix")
st.markdown("Different mechanisms composed in one run (a heterogeneous accountant): one row per mechanism "
            "with its parameters as `key=value; key=value` (the CLI flags, e.g. `sigma=1.1`), how many times "
            "it runs, and an optional Poisson sampling rate and neighbouring relation. Answered at the "
            "target above, by every route; the table is kept in the URL as the JSON that "
            "`python -m dpviz mechanism mix --spec` reads.")


def mix_editor() -> str | None:
    """The mix table, seeded from the URL (``?mix=``) and written back after each edit; the spec text
    (None, after a notice, when a cell cannot be read).

    As ``ui.levels_editor``: the table a person edits keeps its seed while the URL holds what this
    session last wrote, so an edit is never lost to a rebuilt widget."""
    text = st.query_params.get(mv.MIX.key, mv.MIX.default)
    seed = st.session_state.get("_mix_seed")
    if seed is None or seed["url"] != text:
        problem = None
        try:
            rows = mv.mix_rows(text)
        except ParameterError as exc:
            problem, rows = exc, mv.mix_rows(mv.MIX.default)
        seed = {"url": text, "rows": rows, "problem": problem,
                "generation": 0 if seed is None else seed["generation"] + 1}
        st.session_state["_mix_seed"] = seed
    frame = pd.DataFrame(seed["rows"], columns=list(mv.MIX_COLUMNS), dtype=object)
    edited = st.data_editor(frame, num_rows="dynamic", hide_index=True,
                            key=f"mix_editor_{seed['generation']}", column_config={
                                "mechanism": st.column_config.SelectboxColumn(
                                    "mechanism", options=list(mv.KINDS.values()), required=True),
                                "parameters": st.column_config.TextColumn(
                                    "parameters", help="key=value; key=value, e.g. sigma=1.1; sensitivity=1"),
                                "count": st.column_config.TextColumn("count", help="how many runs, ≥ 1"),
                                "sampling rate": st.column_config.TextColumn(
                                    "sampling rate", help="Poisson rate q in (0, 1]; empty: no subsampling"),
                                "neighbouring": st.column_config.SelectboxColumn(
                                    "neighbouring", options=list(mv.registry.NEIGHBOURING)),
                            })
    rows = [{c: "" if v is None or v != v else str(v) for c, v in zip(mv.MIX_COLUMNS, row, strict=True)}
            for row in edited.itertuples(index=False)]
    try:
        new_text = mv.mix_spec(rows)
    except ParameterError as exc:  # a malformed cell (a parameter without key=): named; the URL kept
        ui.notice(exc)
        return None
    if seed["problem"] is not None:
        ui.notice(seed["problem"], default="mix")
        if rows == seed["rows"]:
            return new_text
    if new_text != text:
        st.query_params[mv.MIX.key] = new_text  # this session's own rows: not a new seed
        seed.update(url=new_text, problem=None)
    return new_text


spec = mix_editor()
if spec is not None:  # else a cell that cannot be read, named above
    try:
        mixed = ui.cached(mv.mix_view)(spec, **target_kw)
    except ParameterError as exc:
        ui.notice(exc)  # a mix entry's fields are the keys typed in it (scale=2)
    else:
        st.markdown("**The mix:** " + mv.headline(mixed.summary, solve=solve, refined=True))
        ui.table(mixed.tables["mix"], key="table_mix")
        m1, m2 = st.columns(2)
        with m1:
            ui.download_json(mixed.payload, filename=f"mechanisms_mix_{solve}.json", key="json_mix",
                             label="Mix and results (JSON)")
        with m2:
            ui.download_csv(mixed.csv["mix"], filename=f"mechanisms_mix_{solve}.csv", key="csv_mix",
                            label="Mix routes (CSV)")

st.header("Heterogeneous composition")
st.markdown("Mechanisms with different (ε_i, δ_i): one row per kind with its count (type numbers as "
            "you would write them, e.g. `1e-6`; add a row with **+** or in the empty last row, delete rows "
            "by selecting them and pressing Delete). The exact optimum sums over the counts of the "
            "canonical pairs (a few distinct rows); the PLD route scales to many rows; KOV Thm 3.5 is the "
            "closed form.")


@st.fragment
def heterogeneous_section() -> None:
    """Its own inputs and table, rerun on their own when one of its inputs changes (``st.fragment``:
    the mechanism above is not redrawn)."""
    hdelta = ui.param_input(mv.HDELTA)
    levels = ui.levels_editor(HET_ROWS)
    if levels is not None:
        rows = [{"ε": lv.epsilon, "δ": lv.delta, "count": lv.count} for lv in levels]
        try:
            ui.table(ui.cached(mv.heterogeneous)(rows, delta=hdelta), key="table_hetero")
        except ParameterError as exc:
            ui.notice(exc)


heterogeneous_section()

ui.cite_box("mechanisms")
