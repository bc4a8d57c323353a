"""Hypothesis strategies for the argument space of each CLI subcommand.

Every numeric flag draws from a mix of values inside its range (log-uniform), boundary values
(0, 1, 1e-300, 5e-324, 1e308, …) and malformed strings ("nan", "1e-400", "0x10", …); flags are
sometimes left out, doubled or replaced by unknown ones. ``wide=True`` (the long run in
``scripts/fuzz_cli.py``) also draws the expensive sizes: k up to 10^7 for every subcommand.
"""

from __future__ import annotations

import math

from hypothesis import strategies as st

BOUNDARY = ("0", "1", "-0", "0.5", "1e-300", "5e-324", "2.2e-308", "1e308", "1.7976931348623157e308",
            "100", "0.999999999", "1e-12", "1e-9", "700", "1e6", "10000000")
MALFORMED = ("nan", "NaN", "inf", "-inf", "Infinity", "-1", "-1e-300", "1e-400", "1e400", "", " ", "abc",
             "0x10", "1_000", "1e", "--1", "1,5", "½", "١", "1e-4000", "+0.5", " 0.1 ")


def _fmt(x: float, style: int) -> str:
    return (repr(x), f"{x:.6g}", f"{x:.17g}", f"{x:e}")[style]


@st.composite
def _mix(draw, inside: st.SearchStrategy[str], odd: tuple[str, ...], rare: bool = False) -> str:
    """A value from ``inside`` 85% of the time (98% when ``rare``), else a boundary or malformed
    string: with five or six flags per call, about half the calls are then valid throughout."""
    roll = draw(st.integers(0, 99 if rare else 19))  # Hypothesis favours 0: 0 is the common case
    if roll == 1:
        return draw(st.sampled_from(MALFORMED))
    if roll in (2, 3):
        return draw(st.sampled_from(odd))
    return draw(inside)


def number(lo: float, hi: float, *, log: bool = True, rare: bool = False) -> st.SearchStrategy[str]:
    """A number in [lo, hi] as text (log-uniform when ``log``), or a boundary or malformed string."""
    if log and lo > 0:
        a, b = math.log10(lo), math.log10(hi)
        inside = st.builds(lambda u, s: _fmt(10.0 ** u, s), st.floats(a, b), st.integers(0, 3))
    else:
        inside = st.builds(_fmt, st.floats(lo, hi, allow_nan=False), st.integers(0, 3))
    return _mix(inside, BOUNDARY, rare)


@st.composite
def _whole(draw, hi: int) -> str:
    """1..30 half of the time, log-uniform up to min(hi, 10^5) mostly, up to ``hi`` one time in ten."""
    roll = draw(st.integers(0, 9))
    if roll <= 4:
        return str(draw(st.integers(1, min(30, hi))))
    top = hi if roll == 9 else min(hi, 100_000)
    return str(max(1, min(top, round(10.0 ** draw(st.floats(0.0, math.log10(top)))))))


def count(hi: int, *, rare: bool = False) -> st.SearchStrategy[str]:
    """k-like counts: mostly small, sometimes large (``_whole``), sometimes odd text."""
    return _mix(_whole(hi), ("1", "2", "0", "-3", "2.0", "2.5", "1e3", "1e7", "10000001", "1e400", "1e-400"),
                rare)


def probability(*, rare: bool = False) -> st.SearchStrategy[str]:
    return number(1e-12, 0.999, log=True, rare=rare)


def budget() -> st.SearchStrategy[list[str]]:
    """``--budget SECONDS`` (cost bounds): mostly absent, else a small, large or odd value."""
    seconds = _mix(number(0.01, 30.0), ("0", "-1", "1e-9", "1e-300", "1e9", "nan", ""))
    return st.one_of(st.just([]), st.just([]), st.just([]), seconds.map(lambda v: ["--budget", v]))


@st.composite
def _flags(draw, pairs: list[tuple[str, st.SearchStrategy[str]]], *,
           optional: tuple[str, ...] = ()) -> list[str]:
    """Each (flag, value) pair; optional flags appear half the time; rarely a flag is dropped,
    doubled, or an unknown flag is added."""
    out: list[str] = []
    for flag, values in pairs:
        if flag in optional and draw(st.booleans()):
            continue
        if draw(st.integers(0, 100)) == 1:  # drop a required flag (rare: not Hypothesis' favourite 0)
            continue
        out += [flag, draw(values)]
        if draw(st.integers(0, 80)) == 1:  # repeated flag: argparse keeps the last
            out += [flag, draw(values)]
    if draw(st.integers(0, 80)) == 1:
        out += [draw(st.sampled_from(("--bogus", "-x", "--k=", "--delta"))), "1"]
    return out


def compose(*, wide: bool = False) -> st.SearchStrategy[list[str]]:
    k_max = 10_000_000 if wide else 100_000
    eps0 = number(1e-8 if wide else 1e-3, 100.0)
    delta0 = st.one_of(st.just("0"), probability())
    level = st.builds(lambda e, d, c: f"{e}:{d}:{c}", number(1e-8 if wide else 1e-3, 100.0, rare=True),
                      st.one_of(st.just("0"), probability(rare=True)),
                      count(20_000 if wide else 2_000, rare=True))
    good = st.lists(level, min_size=1, max_size=4).map(",".join)
    levels = st.one_of(good, good, good,
                       st.sampled_from(("", "1:2", "a:b:c", "0.1:0:1,,", "0.1:0:0", "0.1:1:5", ":::")))
    homogeneous = _flags([("--eps0", eps0), ("--delta0", delta0), ("--k", count(k_max))],
                         optional=("--delta0",))
    inputs = st.one_of(homogeneous, homogeneous, homogeneous, levels.map(lambda s: ["--levels", s]))
    target = st.one_of(st.tuples(st.just("--delta"), probability()),
                       st.tuples(st.just("--delta"), st.just("0")),
                       st.tuples(st.just("--epsilon"), number(1e-3, 1e4)))
    return st.builds(lambda i, t, b: ["compose", *i, *t, *b], inputs, target, budget())


@st.composite
def gce(draw, *, wide: bool = False) -> list[str]:
    k_hi = 10_000_000 if wide else 2_000
    k = draw(count(k_hi))
    try:
        k_int = int(k)
    except ValueError:
        k_int = 10
    which = draw(st.sampled_from(("uniform-nonzero", "at-least", "cap", "uniform-nonzero", "at-least", "cap",
                                  "bad")))
    delta0 = draw(st.one_of(st.just("0"), st.just("0"), probability()))
    if which == "at-least" and not wide:  # the exact δ0 > 0 sum is ~k³/6 classes: keep k small
        k = str(min(max(k_int, 1), 40)) if delta0 not in ("0",) else str(min(max(k_int, 1), 2_000))
        k_int = int(k)
    args = ["gce", *draw(_flags([("--eps0", number(1e-3, 100.0)), ("--delta0", st.just(delta0)),
                                 ("--k", st.just(k)), ("--delta", probability())],
                                optional=("--delta0",)))]
    if which == "uniform-nonzero":
        args += ["--prior", "uniform-nonzero"]
    elif which == "at-least":
        good = st.integers(1, max(1, k_int)).map(str)
        k2 = draw(st.one_of(good, good, good, st.sampled_from(("0", "-1", "x", "", str(k_int + 1)))))
        args += ["--prior", f"at-least:{k2}"]
    elif which == "cap":
        args += ["--cap", draw(count(k_hi))]
        if draw(st.booleans()):
            args += ["--neighbouring", draw(st.sampled_from(("unbounded", "bounded", "bounded", "unbounded",
                                                             "sideways", "")))]
    else:
        args += draw(st.sampled_from((["--prior", "nope"], [], ["--prior", "uniform-nonzero", "--cap", "3"])))
    return args + draw(budget())


_MECH_PARAM = {
    "gaussian": ("--sigma", (1e-3, 1e3)),
    "laplace": ("--scale", (1e-3, 1e3)),
    "geometric": ("--eps0", (1e-3, 100.0)),
    "randomized-response": ("--eps0", (1e-3, 100.0)),
}


@st.composite
def mechanism(draw, kind: str | None = None, *, wide: bool = False, fast: bool = False) -> list[str]:
    """``fast`` (the default test): k ≤ 30, a coarse --h most of the time and --compare rarely, so
    that a call takes ~0.1 s; the long run draws k up to 10^7 (``wide``) and the automatic grid."""
    kind = kind or draw(st.sampled_from(sorted(_MECH_PARAM)))
    flag, (lo, hi) = _MECH_PARAM[kind]
    k_hi = 10_000_000 if wide else 30 if fast else 2_000 if kind == "gaussian" else 200
    pairs = [(flag, number(lo, hi)), ("--k", count(k_hi)), ("--delta", probability())]
    optional = ["--sampling-rate", "--h"]
    h = number(1e-3, 1.0) if fast and draw(st.integers(0, 7)) != 1 else number(1e-5, 1.0)
    pairs += [("--sampling-rate", number(1e-6, 1.0)), ("--h", h)]
    if kind in ("gaussian", "laplace", "geometric"):
        sens = number(1e-3, 1e3) if kind != "geometric" else st.one_of(count(20), number(0.1, 10.0))
        pairs.append(("--sensitivity", sens))
        optional.append("--sensitivity")
    if fast:
        optional.remove("--h")  # always a grid width: the automatic one aims at 1M bins (~1 s)
    args = ["mechanism", kind, *draw(_flags(pairs, optional=tuple(optional)))]
    if draw(st.integers(0, 12 if fast else 6 if not wide else 3)) == 1:
        args.append("--compare")
    return args + draw(budget())


_ATTACK_PARAM = {
    "canonical": ("--eps0", (1e-3, 20.0)),
    "randomized-response": ("--eps0", (1e-3, 20.0)),
    "laplace": ("--scale", (1e-2, 1e3)),
    "gaussian": ("--sigma", (1e-2, 1e3)),
}


@st.composite
def attack(draw, kind: str | None = None) -> list[str]:
    """``attack KIND``: small k and trials (a call takes well under a second), the mechanism's main
    flag, δ anywhere, the confidence and Poisson rate sometimes; rarely trials beyond the maximum."""
    kind = kind or draw(st.sampled_from(sorted(_ATTACK_PARAM)))
    flag, (lo, hi) = _ATTACK_PARAM[kind]
    trials = st.one_of(st.integers(100, 3_000).map(str), st.integers(100, 3_000).map(str),
                       count(3_000, rare=True), st.sampled_from(("50", "20000000", "1e3", "0")))
    pairs = [(flag, number(lo, hi)), ("--k", count(30)), ("--trials", trials),
             ("--seed", count(10**6)), ("--delta", probability()),
             ("--confidence", number(0.4, 0.9999999, log=False)), ("--sampling-rate", number(1e-4, 1.0))]
    return ["attack", kind, *draw(_flags(pairs, optional=("--confidence", "--sampling-rate")))]
