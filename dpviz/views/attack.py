"""The attack-lab view (issue 13): the membership attack drawn on the privacy region, its certified
ε beside the proven ε, and the "is Alice in the survey?" worked example. No Streamlit here: the page
runs ``dpviz.attack.run_attack`` (cached per seed) and hands the result to ``build``/``alice``."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from dpviz import budget as budgets
from dpviz.attack import KINDS, PARAMS, Attack, AttackResult, make_attack, run_attack
from dpviz.attack import curve as C
from dpviz.attack.run import admit, cost
from dpviz.budget import Budget, Cost
from dpviz.figures.attack import attack_figure
from dpviz.mechanisms.registry import mechanism_class
from dpviz.params import Param
from dpviz.regions.boundary import Boundary, intersection_boundary
from dpviz.validation import ParameterError, check_count, check_positive
from dpviz.views import Deferred, View, ViewSpec

ALICE_K_MAX = 50
"""Most answers in the worked example (its table shows counts out of k)."""

TITLES = {key: mechanism_class(key).title for key in KINDS}


def _kind(value: object) -> str:
    text = str(value).strip()
    for key, title in TITLES.items():
        if text in (key, title):
            return key
    raise ParameterError("mechanism", value, "one of " + ", ".join(KINDS))


MECHANISM = Param("mechanism", "mechanism", "canonical", _kind,
                  "The mechanism attacked: " + ", ".join(KINDS) + ".")
PAGE_DEFAULTS = {"eps0": 0.5, "trials": 100_000, "delta": 1e-3, "sampling_rate": 1.0}
"""The page opens on the canonical (0.5, 0)-DP pair, k = 10, 100,000 trials, δ = 1e-3."""


def mechanism_params() -> tuple[Param, ...]:
    """Every parameter of the attackable mechanisms, once each (``eps0`` is shared)."""
    seen: dict[str, Param] = {}
    for key in KINDS:
        for p in mechanism_class(key).params:
            seen.setdefault(p.key, replace(p, default=PAGE_DEFAULTS.get(p.key, p.default)))
    return tuple(seen.values())


MECH_PARAMS = mechanism_params()
ATTACK_PARAMS = tuple(replace(p, default=PAGE_DEFAULTS.get(p.key, p.default)) for p in PARAMS)
ALL_PARAMS = (MECHANISM, *MECH_PARAMS, *ATTACK_PARAMS)


def own_keys(kind: str) -> tuple[str, ...]:
    """The URL keys of ``kind``'s own parameters, in the registry's order."""
    return tuple(p.key for p in mechanism_class(_kind(kind)).params)


def attack_of(values: dict[str, Any], budget: Budget = budgets.PAGE) -> Attack:
    """The checked ``Attack`` of the page's values (only the chosen mechanism's parameters), its
    trials within ``budget`` (``run.admit``)."""
    kind = values["mechanism"]
    own = {p.key for p in mechanism_class(kind).params}
    params = {k: v for k, v in values.items() if k in own}
    setting = {p.key: values[p.key] for p in PARAMS if p.key in values}
    return admit(make_attack(kind, **setting, **params), budget)


def run(attack: Attack, progress: Callable[[float], None] | None = None) -> AttackResult:
    """``run_attack`` within the page's budget (the proven ε and the curve; sampling is bounded by
    ``MAX_TRIALS`` and ``MAX_STEP_DRAWS``)."""
    return run_attack(attack, progress=progress, budget=budgets.PAGE)


def trials_cost(attack: Attack) -> Cost:
    """Estimated time of sampling and testing ``attack``'s trials (``dpviz.attack.run.cost``: one
    unit per trial and per step drawn one by one), worded for the page's notice."""
    c = cost(attack)
    return Cost(c.seconds, c.bytes, f"Sampling {attack.trials:,} trials per hypothesis")


def headline(result: AttackResult) -> str:
    """"This attack shows ε ≥ …; the guarantee proves ε ≤ …" (and the ratio)."""
    a = result.attack
    shown = f"This attack shows ε ≥ {result.empirical_epsilon:.3g} (at {a.confidence:.0%} confidence)"
    proven = result.proven_epsilon
    if proven is None:
        return f"{shown}; no finite ε is proven at δ = {a.delta:g} ({result.proven.reason or 'no route'})."
    ratio = result.ratio
    tail = f" — the attack reaches {ratio:.0%} of it" if ratio is not None else ""
    out = f"{shown}; the guarantee proves ε ≤ {proven:.3g} at δ = {a.delta:g}{tail}."
    return f"{out} {result.chance_note}" if result.chance_note else out


def regions(result: AttackResult) -> tuple[dict[str, Boundary], dict[str, str]]:
    """The tested pair's trade-off curve and R(ε_proven, δ), with their legend labels."""
    out: dict[str, Boundary] = {}
    labels: dict[str, str] = {}
    proven = result.proven_epsilon
    if proven is not None and math.isfinite(proven):
        out["proven"] = intersection_boundary([proven], [result.attack.delta])
        labels["proven"] = f"Proven: R(ε = {proven:.3g}, δ = {result.attack.delta:g})"
    t = result.tradeoff
    if t.boundary is not None:
        out["tradeoff"] = t.boundary
        labels["tradeoff"] = ("Exact trade-off curve" if t.kind == "exact"
                              else "Certified region (PLD upper δ)")
    return out, labels


RESULT_KEY: dict[str | type[Any], Callable[[Any], Any]] = {AttackResult: lambda result: result.attack}
"""How a page's cache of ``build`` and ``alice`` keys a run: by its ``Attack``, which determines it
(``run_attack`` is a pure function of it, the seed included; only its timings differ between two
runs), not by Streamlit's hash of every array and nested result it holds (``dataclasses.asdict``,
1–2 ms per call and rerun, issue 20)."""


def build(result: AttackResult) -> View:
    """Figure, CSV (the curve with its boxes, made when first read: ``Deferred``), JSON (the CLI's
    answer and the curve), the headline."""
    a = result.attack
    cert = result.certificate
    regs, labels = regions(result)
    label = result.attack.accountable().label
    title = f"Membership attack on {label}, k = {a.k:,}: {a.trials:,} trials per hypothesis"
    fig = attack_figure(p_fa=result.curve.p_fa, p_md=result.curve.p_md, boxes=result.box_bounds(),
                        confidence=a.confidence, regions=regs, labels=labels, title=title,
                        point=(cert.p_fa_upper, cert.p_md_upper),
                        point_label=f"Certified test: ε ≥ {cert.epsilon:.3g}", test_name=result.test_name)
    payload = {"view": "attack", "parameters": a.describe(), **result.to_json(),
               "curve": {"threshold": result.curve.thresholds, "P_FA": result.curve.p_fa,
                         "P_MD": result.curve.p_md}}
    summary = {"empirical_epsilon": result.empirical_epsilon, "proven_epsilon": result.proven_epsilon,
               "ratio": result.ratio, "headline": headline(result)}
    return View(figures={"attack": fig}, csv={"curve": Deferred(result.columns)}, payload=payload,
                summary=summary)


def build_values(*, budget: Budget = budgets.PAGE, **values: Any) -> View:
    """The view of the page's values (``python -m dpviz figure attack``): the same ``Attack`` the
    page runs (``attack_of``), run within ``budget``, then ``build``."""
    return build(run_attack(attack_of(values, budget), budget=budget))


SPEC = ViewSpec(name="attack", title="Attack lab", params=ALL_PARAMS, build=build_values)


# ---------------------------------------------------------------------- Alice
ALICE_EPS0 = Param("alice_eps0", "ε0 of each answer", 1.0,
                   partial(check_positive, field="ε0 of each answer", maximum=10.0),
                   "Each published answer is the truth with probability e^ε0/(1 + e^ε0).")
ALICE_K = Param("alice_k", "answers published k", 5, partial(check_count, field="answers published k",
                                                             maximum=ALICE_K_MAX),
                f"How many randomized answers about Alice the survey publishes, 1 to {ALICE_K_MAX}.")
ALICE_T = Param("alice_t", "guess “in” from this many “yes”", 3,
                partial(check_count, field="guess “in” from this many “yes”", minimum=0,
                        maximum=ALICE_K_MAX + 1),
                "The attacker's rule: say “Alice is in” when at least this many answers are “yes”.")
ALICE_TRIALS = 2000
"""Trials per hypothesis of the worked example (small: it is read, not certified to many digits)."""
ALICE_PARAMS = (ALICE_EPS0, ALICE_K, ALICE_T)
ALICE_SHOWN = 5
"""Trials shown per hypothesis in the example's table (ten rows fit without scrolling)."""


def alice_attack(*, alice_eps0: float, alice_k: int, seed: int) -> Attack:
    """Randomized response on "is Alice in the survey?", k answers published, at δ = 0."""
    return make_attack("randomized-response", eps0=alice_eps0, k=alice_k, trials=ALICE_TRIALS, seed=seed,
                       delta=0.0, confidence=0.95)


def yes_counts(statistic: np.ndarray, *, eps0: float, k: int) -> np.ndarray:
    """The number of “yes” answers behind each privacy-loss sum (2·yes − k)·ε0."""
    return np.rint((statistic / eps0 + k) / 2.0).astype(int)


def rule_verdict(*, fa: int, md: int, n: int, shown: float, headline: str) -> str:
    """What the rule's observed rates say, then the certified value that counts. A rate of 0 in n
    trials makes the point estimate ln((1 − β)/α) unbounded: it is not evidence of an unbounded ε
    (the true rate may be small but positive), so no ε is claimed from it (issue 21)."""
    if math.isinf(shown):
        which = "false alarm" if fa == 0 else "missed detection"
        rule = (f"This rule made no {which} in {n:,} trials, so its point estimate of ε is unbounded: "
                f"a rate of 0 in finitely many trials does not show that the true rate is 0, and proves "
                f"no ε by itself.")
    else:
        rule = (f"This rule's observed rates give the point estimate ε ≈ {shown:.3g} (no confidence "
                f"attached: a guess, not a proof).")
    certified = headline[0].lower() + headline[1:]
    return f"{rule} What counts is the certified value, at the best threshold: {certified}"


def same_as_canonical(values: dict[str, Any]) -> str | None:
    """Why randomized response with two answers shows the canonical pair's numbers: it *is* that
    pair (KOV §3: the canonical (ε0, 0) pair is binary randomized response), so the same ε0, k,
    seed and trials give the same trials and the same ε (issue 21)."""
    if values.get("mechanism") != "randomized-response" or int(values.get("categories", 2)) != 2:
        return None
    return ("Randomized response with two answers and ε0 is the canonical (ε0, 0)-DP pair of KOV §3 (the "
            "worst case among all ε0-DP mechanisms): the same privacy-loss law, so with the same ε0, k, "
            "seed and trials it shows exactly the numbers of the canonical mechanism at δ0 = 0.")


def alice_lab_query(*, alice_eps0: float, alice_k: int, alice_t: int) -> str:
    """The lab's URL for the example's survey: randomized response with the example's ε0 and k, the
    example's own fields kept (the lab then certifies the same survey with more trials)."""
    return (f"mechanism=randomized-response&eps0={alice_eps0:g}&categories=2&k={alice_k}"
            f"&alice_eps0={alice_eps0:g}&alice_k={alice_k}&alice_t={alice_t}")


def alice(result: AttackResult, *, t: int) -> View:
    """The worked example: the first trials as a table (truth, “yes” count, guess, right?), the two
    error rates of the rule "guess in from t yes" (observed, with the exact values beside them),
    and the rule's point on the region."""
    from dpviz.attack.theory import randomized_response_rates

    a = result.attack
    eps0, k = dict(a.params)["eps0"], a.k
    if t > k + 1:
        raise ParameterError("guess “in” from this many “yes”", t, f"at most k + 1 = {k + 1}")
    rows: list[dict[str, str]] = []
    for truth, stats in (("in", result.preview_in), ("out", result.preview_out)):
        for i, yes in enumerate(yes_counts(stats[:ALICE_SHOWN], eps0=eps0, k=k)):
            guess = "in" if yes >= t else "out"
            rows.append({"trial": f"{truth} #{i + 1}", "Alice is": truth, "“yes” answers": f"{yes} of {k}",
                         "attacker guesses": guess, "right?": "✓" if guess == truth else "✗ (error)"})
    threshold = (2 * t - k) * eps0  # guess "out" ⇔ statistic below this
    c = result.curve
    i = int(np.searchsorted(c.thresholds, threshold, side="left"))
    fa, md = int(c.false_alarms[i]), int(c.misses[i])
    exact_fa, exact_md = randomized_response_rates(eps0=eps0, k=k, t=t)
    n = c.trials
    rates = [
        {"error": "false alarm P_FA", "when": "Alice is in, guessed out",  # a short name: never cut
         "observed": f"{fa:,} of {n:,} = {fa / n:.3f}", "exact": f"{exact_fa:.3f}"},
        {"error": "missed detection P_MD", "when": "Alice is out, guessed in",
         "observed": f"{md:,} of {n:,} = {md / n:.3f}", "exact": f"{exact_md:.3f}"},
    ]
    regs, labels = regions(result)
    fig = attack_figure(p_fa=c.p_fa, p_md=c.p_md, boxes=result.box_bounds(), confidence=a.confidence,
                        regions=regs, labels=labels,
                        title=f"Is Alice in the survey? {k} randomized answers, ε0 = {eps0:g} each",
                        point=(fa / n, md / n), point_label=f"Rule: guess in from {t} “yes”", height=560)
    shown = float(C.epsilon_shown(fa / n, md / n, 0.0))
    summary = {"p_fa": fa / n, "p_md": md / n, "exact_p_fa": exact_fa, "exact_p_md": exact_md,
               "epsilon_shown": shown, "headline": headline(result),
               "verdict": rule_verdict(fa=fa, md=md, n=n, shown=shown, headline=headline(result))}
    return View(figures={"alice": fig}, tables={"trials": rows, "rates": rates}, summary=summary,
                payload={"view": "attack-alice", "t": t, **result.to_json()})
