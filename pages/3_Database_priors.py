"""Database priors: the generalized composition experiment (Hartmann-Bindschaedler-West)."""

import streamlit as st

from dpviz import ui
from dpviz.params import in_words
from dpviz.validation import ParameterError
from dpviz.views import database_priors
from dpviz.views.database_priors import (
    ALLOWED,
    CAP,
    COMMON,
    DELTA,
    DELTA0,
    EPS0,
    FREE_ONLY,
    K2,
    KIND,
    KIND_LABELS,
    LEVELS,
    NEIGHBOURING,
    NULL,
    PAID_ONLY,
    PRESET,
    PRESETS,
    PRIOR,
    SPEC,
    K,
    heterogeneous_rows,
    url_query,
    with_default,
)

ui.page_setup("Database priors")
st.title("Database priors")
st.markdown(
    "Classic composition assumes the worst: your record is in *every* database that is queried. Often "
    "that is impossible (nobody spends more than 365 nights in hospital) or the adversary does not know "
    "where you are. Hartmann, Bindschaedler and West's *generalized composition experiment* (HBW) "
    "accounts for both; this page shows their bounds, the classic answer and the exact worst case side "
    "by side."
)

with st.expander("The results used (sources in the seeds)"):
    st.markdown("**Hypothesis DP** (HBW Def. 3): priors p0, p1 over membership vectors b ∈ {0,1}^k, and "
                "for every output set S, both ways,")
    st.latex(r"\mathbb{E}_{b\sim p_1}\Pr[V^b\in S]\le e^{\varepsilon}\,"
             r"\mathbb{E}_{b\sim p_0}\Pr[V^b\in S]+\delta")
    st.markdown("**Membership caps** (HBW §V-A): if a person is in at most C databases, only C "
                "mechanisms (2C with bounded DP) are composed. **Uniform prior over b ≠ 0⃗** "
                "(HBW Cor. 7, simple composition):")
    st.latex(r"\varepsilon=\ln\frac{(e^{\varepsilon_0}+1)^k-1}{2^k-1},\qquad "
             r"\delta=\frac{2^{k-1}\,k\,\delta_0}{2^k-1}")
    st.markdown("**HBW Thm 3**: the same prior as a mixture over the first database that holds the record, "
                "weights w_i = 2^{k−i}/(2^k − 1): one full mechanism and k − i mechanisms subsampled with "
                "rate ½ (Steinke Thm 29),")
    st.latex(r"S_{1/2}(M)\ \text{is}\ \Big(\ln\big(1+\tfrac{e^{\varepsilon_0}-1}{2}\big),\ "
             r"\tfrac{\delta_0}{2}\Big)\text{-DP}")
    st.markdown("**HBW Cor. 6**: the same mixture, term i being the first mechanism's (ε0, δ0) followed "
                "by the k − i subsampled ones composed (the table composes them optimally, KOV Thm 3.3, at "
                "one common δ̂ = δ − δ0),")
    st.latex(r"\varepsilon=\ln\Big[\tfrac{1}{2^k-1}\sum_{i=1}^{k}2^{k-i}e^{\varepsilon_0+\hat\varepsilon_i}\Big],"
             r"\quad (\hat\varepsilon_i,\hat\delta_i)=\mathrm{CompGuarantee}"
             r"\big(S_{1/2}(M_{i+1}),\dots,S_{1/2}(M_k)\big)")
    st.markdown("**Exact worst case** (beyond the paper): the privacy curve of the canonical pair "
                "(KOV eq. 16) mixed over the prior, against the null hypothesis, in both directions.")
with st.expander("How to read this page"):
    st.markdown(
        "- The table lists every bound that applies to the scenario, as ε at the target total δ. "
        "*Exact* rows are the truth for the worst (ε0, δ0)-DP mechanisms; *upper* rows are theorems.\n"
        "- *Proved for* says which inequality of HBW Def. 3 a number covers: a bound proved only "
        "forward does not protect against the reverse test.\n"
        "- The first plot compares classic composition (the record in every database) with the exact "
        "answer under the scenario as the number of databases grows; the second shows both privacy "
        "regions: the smaller the region, the closer every test is to guessing.\n"
        "- **Custom → a prior you type**: the adversary's prior p1 as weights over the number of "
        "databases |b| that hold the record (`1:0.5, 2-4:0.5`: one database with probability ½, two to "
        "four with ½ shared evenly among the three sizes; uniform over which databases), or over the "
        "vectors b themselves for k ≤ 16 (`0110:0.5, "
        "1001:0.5`), or by name (`uniform-nonzero`, `at-least:3`); the null hypothesis p0 is 0⃗ unless "
        "you type one. The table then shows the exact worst case, classic composition of all k, and "
        "composition of only the d databases in which a vector of p0 and one of p1 can differ (the "
        "*support* rows, HBW §V-A); the paper's own priors get every bound of the paper. "
        "**An allowed set you type** (`1100, 0011, 0000`) is a constraint: only those membership "
        "vectors are possible (HBW §V-A Ex. 3). With a typed prior k is fixed, so the first plot runs "
        "over ε0 instead of k (docs/MATH.md §15).\n"
        "- Every input is in the address bar: copy it to share the scenario, typed prior included."
    )

titles = {p.title: key for key, p in PRESETS.items()}
ui.migrate_url("priors", url_query)  # kind=typed (the CLI's value): the menu's name, then rerun


ui.url_aliases(SPEC.aliases)  # links shared before the URL keys became the CLI's flags (?nb=)


def apply_scenario() -> None:
    """A scenario brings its own C and k' (HBW's examples): set them, so that the screen shows the
    scenario's values and the URL, which leaves out a value equal to its widget's default (the
    scenario's), opens on exactly these."""
    p = PRESETS[titles[st.session_state[PRESET.key]]]
    st.session_state[CAP.key] = str(p.cap)
    st.session_state[K2.key] = str(p.k2)


@st.fragment(key="priors_question")
def question_section() -> None:
    """The scenario, its inputs, the bounds, both figures and the downloads: a change of one of
    these inputs reruns this fragment alone (issue 20), not the page's title, explanations and
    formulas around it, which no input changes."""
    chosen = ui.choice_input(PRESET.label, list(titles), key=PRESET.key,
                             default=PRESETS[PRESET.default].title, on_change=apply_scenario)
    values = {**SPEC.defaults(), "preset": PRESET.check(chosen)}  # those not shown: the scenario's
    preset = PRESETS[values["preset"]]
    st.info(preset.story, icon=":material/lightbulb:")

    # Drawn for every scenario, empty but for Custom: the inputs below keep their place in the page
    # whatever the scenario. Shifted by an extra radio above them, Streamlit's frontend stopped writing
    # k and C into the URL after a switch to Custom (the link then opened with k = 1000).
    kind_box = st.container()
    kind = preset.kind
    if preset.key == "custom":
        label = ui.choice_input(KIND.label, list(KIND_LABELS.values()), key=KIND.key,
                                default=KIND_LABELS[KIND.default], container=kind_box)
        kind = values["kind"] = KIND.check(label)

    shown = ui.param_inputs((EPS0, DELTA0, DELTA))
    extra: dict = {}
    if kind == "features":
        extra.update(ui.param_inputs((COMMON, FREE_ONLY, PAID_ONLY)))
        k = extra["common"] + extra["free_only"] + extra["paid_only"]
    elif kind == "allowed":
        extra["allowed"] = ui.param_input(ALLOWED)  # k is the vectors' length (the view reads it)
    else:
        cols = st.columns(3)
        k = extra["k"] = ui.param_input(K, cols[0])
        if kind == "cap":
            extra["cap"] = ui.param_input(with_default(CAP, preset.cap), cols[1])
        if kind == "at-least":
            extra["k2"] = ui.param_input(with_default(K2, preset.k2), cols[1])
        if kind == "typed":
            extra["prior"] = ui.param_input(PRIOR, cols[1])
            extra["null"] = ui.param_input(NULL, cols[2])
    if kind in ("cap", "features", "allowed"):
        extra["neighbouring"] = ui.choice_input(NEIGHBOURING.label, ["unbounded", "bounded"],
                                                key=NEIGHBOURING.key, default=NEIGHBOURING.default,
                                                help=NEIGHBOURING.help)
    values.update(shown, **extra)

    # said at once when the exact worst case will take more than about a second (large k, many count
    # classes): the core's estimate, for an answer that is not cached; replaced by the answer
    slow = ui.pending(lambda: database_priors.build_cost(**values), SPEC.build, **values)
    waiting = st.empty()
    if slow:
        waiting.info(f"{slow}…", icon=":material/hourglass_top:")
    try:
        view = ui.cached(SPEC.build)(**values)
    except ParameterError as exc:  # e.g. a typed null hypothesis for another k: named by its label
        ui.notice(in_words(exc, SPEC.params))
        return
    waiting.empty()
    q = view.summary["question"]
    k = q.databases

    st.subheader(f"ε at total δ ≤ {ui.unbroken(values['delta'])}, k = {q.databases:,}")
    d = view.summary["compositions"]
    if d is not None and d < q.databases:
        st.markdown(f"Under this constraint only **{d:,}** of the {q.databases:,} mechanisms can tell the "
                    "hypotheses apart; every composition theorem is applied to those alone (HBW §V-A).")
    elif d is not None and kind == "cap":
        bound = f"C = {q.cap:,}" if q.neighbouring == "unbounded" else f"2C = {2 * q.cap:,} (bounded)"
        st.markdown(f"**The cap does not bind:** {bound} ≥ k = {q.k:,}, so a person may be in every "
                    f"database. There is no constraint: all {q.databases:,} mechanisms are composed, as in "
                    "classic composition.")
    elif d is not None:
        st.markdown(f"**This constraint does not bind:** all {q.databases:,} mechanisms can tell the "
                    "hypotheses apart, as in classic composition.")
    for row in view.tables["paper_note"]:  # HBW Ex. 3 as printed beside Def. 3 (docs/MATH.md §20)
        st.info(row["note"])
    ui.table(view.tables["bounds"], key="table_bounds")
    st.caption(
        "*Proved for*: HBW Def. 3 has two inequalities. Forward: the membership prior's output probability "
        "is at most e^ε times the null hypothesis's plus δ; reverse: the other way round. Exact values and "
        "classic guarantees hold both ways. Theorem 3 is evaluated with one common δ̂ for every term, which "
        "proves both directions (the *one common δ̂* rows); the *best split of δ* rows choose a δ̂_i per "
        "term (docs/MATH.md §12), which proves the forward direction only where the row says so."
    )

    tag = ui.export.file_stem("priors", {"preset": preset.key, "kind": kind, "k": k, **shown, **extra})
    ui.show_figure(view.figures["epsilon_vs_k"], filename=f"{tag}_epsilon_vs_k", key="fig_gce_k")
    for row in view.tables["region_note"]:
        st.warning(row["note"])
    ui.show_figure(view.figures["region"], filename=f"{tag}_region", key="fig_gce_region")
    ui.download_csv(view.csv["bounds"], filename=f"{tag}_bounds.csv", key="csv_gce_bounds",
                    label="Download the bounds (CSV)")
    ui.download_csv(view.csv["epsilon_vs_k"], filename=f"{tag}_epsilon_vs_k.csv", key="csv_gce_k",
                    label="Download ε against k (CSV)")
    ui.download_json(view.payload, filename=f"{tag}.json", key="json_gce")
    ui.download_tables({"bounds": view.tables["bounds"]}, title=SPEC.title, values=values, stem=tag,
                       key="report_priors")
    ui.cite_box("priors")

    if kind == "cap":
        st.header("Heterogeneous releases")
        st.markdown(f"The same cap (C = {q.cap:,}, {q.neighbouring}), each database with its own guarantee: "
                    "one row per kind of release, with its ε, δ and how many there are (as `gce --levels … "
                    "--cap`). The exact worst case composes the worst set of releases a person can be in, "
                    "compared over every choice that no swap for a release with larger ε and δ improves; the "
                    "*Constraint* rows are HBW Thm 2 with each composition theorem on the same sets "
                    "(docs/MATH.md §22).")
        levels = ui.levels_editor(LEVELS)
        if levels is not None:
            try:
                ui.table(ui.cached(heterogeneous_rows)(levels, cap=q.cap, neighbouring=q.neighbouring,
                                                        delta=values["delta"]), key="table_hetero")
            except ParameterError as exc:
                ui.notice(exc)


question_section()

with st.expander("Why the prior helps, and what subsampling has to do with it"):
    st.markdown(
        "- **Constraints** remove hypotheses: if a person is in at most c databases, the worst pair of "
        "membership vectors differs in c places (2c with bounded DP), so only c (2c) mechanisms are "
        "composed (HBW §V-A). Parallel composition (McSherry) reaches the same count but only with basic "
        "composition and only for pure ε-DP (HBW §V-A1).\n"
        "- **Priors** make the adversary uncertain: under the uniform prior over b ≠ 0⃗, each database "
        "holds the record with probability about ½, independently. That is exactly Poisson subsampling "
        "with rate ½, which amplifies each (ε0, δ0) to (ln(1 + (e^{ε0} − 1)/2), δ0/2). HBW Thm 3 splits "
        "the prior by the first database that holds the record: one full mechanism plus k − i "
        "subsampled ones, weighted 2^{k−i}/(2^k − 1).\n"
        "- **Exact worst case** (not in the paper): every (ε0, δ0)-DP mechanism is a post-processing of "
        "the canonical four-outcome pair (KOV eq. 16), so mixing that pair over the prior and computing "
        "its privacy curve gives the true worst case. It is summed over outcome-count classes, never "
        "over 4^k outcomes."
    )
