"""Attack lab (issue 13): run the adversary's membership test and watch it land inside the region
(KOV §2; Steinke §3.2; HBW's generalized experiment). Inputs → ``dpviz.attack`` (cached per seed) →
``dpviz.views.attack`` → display."""

from concurrent.futures import ThreadPoolExecutor, wait

import streamlit as st

from dpviz import ui
from dpviz.params import in_words, migrate
from dpviz.validation import ParameterError
from dpviz.views import attack as av
from dpviz.views.regions import K_PAGE_MAX

ui.page_setup("Attack lab")
ui.migrate_url("attack", migrate)  # an old shared link: today's values, then rerun
st.title("Attack lab")
st.markdown(
    "The regions page says what no test can do; here a test is run. An adversary sees k releases and "
    "tests *“the target's record is in”* against *“it is not”*. The best test (Neyman–Pearson, "
    "Steinke §3.2) thresholds the privacy loss; dpviz samples it N times under each hypothesis, plots "
    "the error rates of every threshold with confidence boxes over the region the guarantee allows, "
    "and reports the ε the attack **certifies** beside the ε the theory **proves**."
)
with st.expander("How the attack's ε is certified"):
    st.markdown("A test with false-alarm rate α and missed-detection rate β is only possible under "
                "(ε, δ)-DP if (α, β) lies in R(ε, δ) (KOV §2), so it shows")
    st.latex(r"\varepsilon\ \ge\ \max\Big(\ln\frac{1-\delta-\beta}{\alpha},\ \ln\frac{1-\delta-\alpha}"
             r"{\beta}\Big)")
    st.markdown(
        "- α and β are replaced by Clopper–Pearson upper bounds, so the statement holds with the stated "
        "confidence.\n"
        "- The threshold is chosen on the first half of the trials and certified on the second half "
        "(choosing the best of many thresholds on the same trials would overstate ε); a union bound "
        "over the two error rates gives the confidence.\n"
        "- A box holds the true (P_FA, P_MD) of its threshold with the stated confidence.\n"
        "- Only what the test needs is sampled: the sum of privacy losses (a count for the canonical "
        "pair and randomized response), so 10⁶ trials at k = 10⁴ take about a second.\n"
        "- Laplace and subsampled mechanisms: the attacker first rounds each step's privacy loss to a "
        "window of width h and tests the sum of the windows. That is a post-processing of what the "
        "mechanism releases, so any test on it is a real attack on the mechanism and the certified ε "
        "still holds for it; its law for all k steps is computed once (FFT) and each trial is one draw "
        "from it (docs/MATH.md §14.5)."
    )


RUNS_CACHED = 32


@st.cache_data(max_entries=RUNS_CACHED, show_spinner=False)
def run(attack: av.Attack, _progress=None) -> av.AttackResult:
    """One run per setting (the seed included): the same link shows the same trials."""
    return av.run(attack, progress=_progress)


def run_with_progress(attack: av.Attack) -> av.AttackResult:
    """``run`` in a worker thread while this one moves the progress bar: the cached function itself
    never touches an element (a cached call that updates one cannot be replayed). A run answered
    before is read at once, with no thread and no bar (issue 20: a change that reruns the lab but
    not its trials sent the bar and its removal, and started a thread, for nothing); the bar's slot
    is drawn either way, so the elements below keep their places in the page."""
    slot = st.empty()
    if ui.feedback.is_cached(run, attack):
        result = run(attack)
        ui.feedback.remember(run, (attack,), {}, entries=RUNS_CACHED)  # most recent, as in the cache
        return result
    done = [0.0]
    # said at once when the core estimates more than about a second and the run is not cached
    label = ui.pending(lambda: av.trials_cost(attack), run, attack) or "Sampling the trials"
    bar = slot.progress(0.0, text=f"{label}…")
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(run, attack, _progress=lambda f: done.__setitem__(0, f))
        while wait([future], timeout=0.2).not_done:  # returns as soon as the run ends
            bar.progress(min(done[0], 1.0), text=f"{label}… {done[0]:.0%}")
    slot.empty()
    result = future.result()
    ui.feedback.remember(run, (attack,), {}, entries=RUNS_CACHED)  # answered: no notice next time
    return result


# --- the lab: every key is a flag of `python -m dpviz attack` ------------------------------------
by_key = {p.key: p for p in av.MECH_PARAMS}
settings = {p.key: p for p in av.ATTACK_PARAMS}
SEED = settings["seed"]
# the two fragments' keys: a change of the lab's seed reruns both (``st.rerun`` from its callback);
# a comment, not a string: Streamlit's magic would show a bare string on the page
LAB, ALICE = "attack_lab", "attack_alice"


def lab_seed() -> int:
    """The lab's seed as its input reads now (its default where the text is not a seed, as the lab
    then runs), whichever of the two fragments runs first."""
    raw = st.session_state.get(SEED.key)
    try:
        return int(SEED.parse(raw)) if raw is not None else int(SEED.check(SEED.default))
    except ParameterError:
        return int(SEED.check(SEED.default))


def seed_changed() -> None:
    """The worked example draws with the lab's seed: both fragments rerun, the rest of the page not."""
    st.rerun([LAB, ALICE])


@st.fragment(key=LAB)
def lab() -> None:
    """The chosen attack: inputs, headline numbers, figure, downloads. A fragment: a change of one of
    its inputs reruns it alone (issue 20: the worked example and the page around it are not redrawn),
    except the seed's, which the worked example shares."""
    kind = ui.choice_input("Mechanism", list(av.KINDS), key="mechanism", default=av.MECHANISM.default,
                           help=av.MECHANISM.help)
    own = [by_key[key] for key in av.own_keys(kind)]  # registry order: σ before Δ, Δ in the same slot
    slots = (*own, *(None,) * max(0, 2 - len(own)), settings["k"], settings["trials"], SEED,
             settings["delta"], settings["confidence"], settings["sampling_rate"], settings["prior"])
    values = {"mechanism": kind, **ui.param_inputs(slots, per_row=3, on_change={SEED.key: seed_changed})}
    try:
        attack = av.attack_of(values)
    except ParameterError as exc:
        ui.notice(in_words(exc, [p for p in slots if p is not None]))
        return
    same = av.same_as_canonical(values)
    if same is not None:
        st.info(ui.plain(same), icon=":material/info:")
    result = run_with_progress(attack)
    view = ui.cached(av.build, hash_funcs=av.RESULT_KEY)(result)  # built once per run, not per rerun
    m1, m2, m3 = st.columns(3)
    m1.metric("The attack shows ε ≥", f"{result.empirical_epsilon:.3g}")
    proven = result.proven_epsilon
    m2.metric("The guarantee proves ε ≤", "—" if proven is None else f"{proven:.3g}")
    m3.metric("Ratio", "—" if result.ratio is None else f"{result.ratio:.0%}")
    st.markdown(ui.plain(view.summary["headline"]))
    tag = ui.export.file_stem("attack", attack.describe())
    ui.show_figure(view.figures["attack"], filename=tag, key="fig_attack")
    st.caption(
        f"Black: the {result.test_name} at every threshold ({attack.trials:,} trials per hypothesis, "
        f"seed {attack.seed}); orange: {attack.confidence:.0%} Clopper–Pearson boxes; blue: the trade-off "
        f"curve of the pair tested ({result.tradeoff.source}); grey: the region R(ε, δ) the proven ε "
        f"allows. Sampling took {result.sample_seconds:.2f} s."
    )
    ui.download_csv(view.csv["curve"], filename=f"{tag}_curve.csv", key="csv_attack")
    ui.download_json(view.payload, filename=f"{tag}.json", key="json_attack")


lab()

# --- the worked example ---------------------------------------------------------------------------
st.subheader("Is Alice in the survey?")
st.markdown(
    "A survey publishes k answers to *“is Alice in the survey?”*, each through randomized response: "
    "the truth with probability e^ε0/(1 + e^ε0), the opposite otherwise. The attacker counts the "
    "“yes” answers and guesses *in* from a threshold on. The test's null hypothesis H0 is *Alice is in* "
    "(KOV §2 names the errors from H0's side), so two errors are possible: a **false alarm** rejects H0 "
    "wrongly (she is in, the guess says out) and a **missed detection** keeps it wrongly (she is out, the "
    "guess says in). DP bounds both in the same way: swapping the two names leaves the region unchanged."
)


@st.fragment(key=ALICE)
def alice_section() -> None:
    """The worked example, rerun on its own when one of its inputs changes (the lab above is not
    touched: ``st.fragment``), with the lab's seed as its input reads now (``lab_seed``)."""
    seed = lab_seed()
    alice_values = ui.param_inputs(av.ALICE_PARAMS, per_row=3)
    try:
        alice_attack = av.alice_attack(alice_eps0=alice_values["alice_eps0"], alice_k=alice_values["alice_k"],
                                       seed=seed)
        alice = ui.cached(av.alice, hash_funcs=av.RESULT_KEY)(run_with_progress(alice_attack),
                                                              t=alice_values["alice_t"])
    except ParameterError as exc:
        ui.notice(exc)
        return
    left, right = st.columns([3, 2])
    with left:
        st.markdown(f"**The first trials** ({av.ALICE_SHOWN} with Alice in, {av.ALICE_SHOWN} with her out)")
        ui.table(alice.tables["trials"], key="alice_trials")
    with right:
        ui.show_figure(alice.figures["alice"], filename=ui.export.file_stem("attack_alice", {
            **alice_values, "seed": seed}), key="fig_alice")
    st.markdown("**The attacker's two error rates** over all trials")  # full width: no cell is cut
    ui.table(alice.tables["rates"], key="alice_rates")
    ui.download_tables({"rates": alice.tables["rates"]}, title="Attack lab, is Alice in the survey?",
                       values={**alice_values, "seed": seed}, stem=ui.export.file_stem("attack_alice", {
                           **alice_values, "seed": seed}), key="report_alice")
    st.markdown(ui.plain(alice.summary["verdict"]))
    st.markdown(f"This example has its own ε0 and k (a survey of at most {av.ALICE_K_MAX} answers). To "
                f"attack the same survey in the lab above, with its trials and confidence: [the lab with "
                f"randomized response, ε0 = {alice_values['alice_eps0']:g}, k = {alice_values['alice_k']}]"
                f"(/Attack_lab?{av.alice_lab_query(**alice_values)}).")
    k_link = alice_attack.k if alice_attack.k <= K_PAGE_MAX else None
    query = f"eps0={alice_values['alice_eps0']:g}&delta0=0" + (f"&k={k_link}" if k_link else "")
    st.markdown(f"The grey region is R(kε0, 0), what k answers of ε0-randomized response allow: see how "
                f"it is built and how it grows with k on [Privacy regions](/Privacy_regions?{query}).")


alice_section()
ui.page_link("pages/1_Privacy_regions.py", label="Privacy regions", icon=":material/square:")
ui.cite_box("attack")
