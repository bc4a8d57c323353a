"""Hypothesis strategies for the argument space of each CLI subcommand.

Every numeric flag draws from a mix of values inside its range (log-uniform), boundary values
(0, 1, 1e-300, 5e-324, 1e308, …) and malformed strings ("nan", "1e-400", "0x10", …); flags are
sometimes left out, doubled or replaced by unknown ones. ``wide=True`` (the long run in
``scripts/fuzz_cli.py``) also draws the expensive sizes: k up to 10^7 for every subcommand.
"""

from __future__ import annotations

import json
import math
import random

from hypothesis import strategies as st

from dpviz.mechanisms.base import Mechanism
from dpviz.mechanisms.registry import MECHANISMS
from dpviz.params import Param

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
    levels = st.one_of(good, good, good, many_levels(),
                       st.sampled_from(("", "1:2", "a:b:c", "0.1:0:1,,", "0.1:0:0", "0.1:1:5", ":::")))
    homogeneous = _flags([("--eps0", eps0), ("--delta0", delta0), ("--k", count(k_max))],
                         optional=("--delta0",))
    inputs = st.one_of(homogeneous, homogeneous, homogeneous, levels.map(lambda s: ["--levels", s]))
    target = st.one_of(st.tuples(st.just("--delta"), probability()),
                       st.tuples(st.just("--delta"), st.just("0")),
                       st.tuples(st.just("--epsilon"), number(1e-3, 1e4)))
    return st.builds(lambda i, t, b: ["compose", *i, *t, *b], inputs, target, budget())


def many_levels() -> st.SearchStrategy[str]:
    """Tens to hundreds of distinct levels (issue 22: 250 of them overflowed the atom count's
    conversion to float in the budget estimate)."""
    return st.builds(lambda n, step, c: ",".join(f"{step * (i + 1):.6g}:0:{c}" for i in range(n)),
                     st.integers(20, 300), st.sampled_from((0.01, 0.001, 0.3)), st.integers(1, 60))


PAYLOAD_HOST = "127.0.0.9"
MARKDOWN = (f"![x](http://{PAYLOAD_HOST}:9/p.png)", f"[click](http://{PAYLOAD_HOST}:9/l)",
            f"http://{PAYLOAD_HOST}:9/auto", ":material/home: **bold**", "<img src=x>", "`tick`")
"""Markdown a shared link could smuggle in (issue 22): as a typed prior's tail or a JSON key."""


@st.composite
def typed_prior(draw, k: int) -> str:
    """A typed prior (``--prior``/``--null``): sizes, ranges, vectors, huge and tiny weights, empty
    text, ranges far beyond k, K2 out of range, Markdown after a valid name (issue 22 items 3, 7, 10;
    issue 21 item 17)."""
    weight = st.sampled_from(("1", "0.5", "2", "1e308", "1.7976931348623157e308", "1e-300", "5e-324", "0",
                              "-1", "nan", "inf"))
    size = st.integers(0, k).map(str)
    span = st.builds(lambda a, b: f"{min(a, b)}-{max(a, b)}", st.integers(0, k), st.integers(0, k))
    vector = st.text("01", min_size=k, max_size=k) if 2 <= k <= 16 else size
    entry = st.builds(lambda key, w, bare: key if bare else f"{key}:{w}", st.one_of(size, span, vector),
                      weight, st.booleans())
    typed = st.lists(entry, min_size=1, max_size=12).map(", ".join)
    odd = st.sampled_from((";", ",", " ; ", "1-10000000:1", f"0-{k}:1e308, {k}:1e308", "at-least:0",
                           f"at-least:{k + 1}", "below:0", "99999999999999999999999:1", "1" * 5000,
                           *(f"at-least:{m}" for m in MARKDOWN)))
    return draw(st.one_of(typed, typed, odd))


@st.composite
def allowed_set(draw, *, wide: bool = False) -> str:
    """``--allowed``: a few vectors, or thousands of them (issue 22 item 6: 7,200 of 16 bits took
    99 s and 1.36 GB when all pairs were compared)."""
    length = draw(st.integers(2, 16))
    n = draw(st.one_of(st.integers(1, 8), st.integers(1, 8), st.integers(500, 20_000 if wide else 4_000)))
    seed = draw(st.integers(0, 2**32 - 1))
    bits = random.Random(seed).getrandbits
    return ", ".join(format(bits(length), f"0{length}b") for _ in range(n))


@st.composite
def gce(draw, *, wide: bool = False) -> list[str]:
    k_hi = 10_000_000 if wide else 2_000
    k = draw(count(k_hi))
    try:
        k_int = int(k)
    except ValueError:
        k_int = 10
    which = draw(st.sampled_from(("uniform-nonzero", "at-least", "cap", "uniform-nonzero", "at-least", "cap",
                                  "bad", "typed", "allowed")))
    if which == "allowed":
        args = ["gce", *draw(_flags([("--eps0", number(1e-3, 100.0)), ("--delta", probability())]))]
        args += ["--allowed", draw(allowed_set(wide=wide)), "--neighbouring",
                 draw(st.sampled_from(("bounded", "unbounded")))]
        return args + draw(budget())
    if which == "typed":  # the exact sum over typed priors costs ~k³ classes: keep k small
        k = str(min(max(k_int, 1), 12))
        k_int = int(k)
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
    elif which == "typed":
        args += ["--prior", draw(typed_prior(k_int))]
        if draw(st.booleans()):
            args += ["--null", draw(typed_prior(k_int))]
    else:
        args += draw(st.sampled_from((["--prior", "nope"], [], ["--prior", "uniform-nonzero", "--cap", "3"])))
    return args + draw(budget())


_MIX_PARAM = {"laplace": "scale", "gaussian": "sigma", "geometric": "eps0", "randomized-response": "eps0"}


@st.composite
def mix(draw, *, wide: bool = False) -> list[str]:
    """``mechanism mix --spec``: short and long specs (up to and beyond the 100 entries allowed, each
    of its own scale: 100 Laplace entries overflowed the atom count), huge and odd values, Markdown
    in JSON keys (issue 22 item 2), and files that never end (``/dev/zero``, item 8)."""
    n = draw(st.one_of(st.integers(1, 4), st.integers(1, 4), st.integers(20, 101 if wide else 100)))
    kinds = draw(st.lists(st.sampled_from(sorted(_MIX_PARAM)), min_size=n, max_size=n))
    value = st.one_of(st.floats(0.05, 50.0), st.sampled_from((1e308, 5e-324, 0.0, -1.0, "nan", "1", None)))
    count = st.sampled_from((1, 20, 2000))
    entries: list[dict[str, object]] = [  # the last entry carries the odd values: the rest are valid
        {"mechanism": kind, _MIX_PARAM[kind]: 1.0 + i / 10, "count": draw(count)}
        for i, kind in enumerate(kinds)]
    roll = draw(st.integers(0, 5))
    if roll == 1:
        entries[-1][_MIX_PARAM[kinds[-1]]] = draw(value)
    elif roll == 2:
        entries[-1]["count"] = draw(st.sampled_from((0, -1, 10**7, 2.5, "many")))
    elif roll == 3:
        entries[-1][draw(st.sampled_from(MARKDOWN))] = 1
    odd_spec = st.sampled_from(("/dev/zero", "/dev/null", "[]", "{}", "[" * 5000, "no-such-file.json"))
    spec = json.dumps(entries) if draw(st.integers(0, 5)) else draw(odd_spec)
    seconds = "2" if wide else "0.3"  # a long mix's PLD is budgeted, not limited by its length
    return ["mechanism", "mix", "--spec", spec, "--delta", draw(probability()), "--h", "0.01",
            "--budget", seconds]


def _param_space(p: Param) -> st.SearchStrategy[str]:
    """A mechanism parameter drawn from its declared ``span``: whole numbers for an integer
    parameter (and, sometimes, a fraction it must refuse), else log-uniform."""
    assert p.span is not None, p.key
    lo, hi = p.span
    if isinstance(p.default, int):
        return st.one_of(count(int(hi)), number(0.1, 10.0))
    return number(lo, hi)


def calibrated() -> tuple[str, ...]:
    """The mechanisms the ``mechanism`` fuzz draws: every registered one with a noise parameter."""
    return tuple(sorted(key for key, cls in MECHANISMS.items() if cls.noise is not None))


def attackable() -> tuple[str, ...]:
    """The mechanisms the ``attack`` fuzz draws: every registered one the attack lab runs."""
    return tuple(sorted(key for key, cls in MECHANISMS.items() if cls.attackable))


@st.composite
def mechanism(draw, kind: str | None = None, *, wide: bool = False, fast: bool = False) -> list[str]:
    """``fast`` (the default test): k ≤ 30, a coarse --h most of the time and --compare rarely, so
    that a call takes ~0.1 s; the long run draws k up to 10^7 (``wide``) and the automatic grid.
    The mechanism's own flags and ranges are those its class declares (``Param.span``)."""
    kind = kind or draw(st.sampled_from(calibrated()))
    cls = MECHANISMS[kind]
    by_key = {p.key: p for p in cls.params}
    closed = cls.closed_form is not Mechanism.closed_form  # a closed form: large k stays cheap
    k_hi = 10_000_000 if wide else 30 if fast else 2_000 if closed else 200
    main = cls.noise or cls.required[0]
    pairs = [(f"--{main}", _param_space(by_key[main])), ("--k", count(k_hi)), ("--delta", probability())]
    optional = ["--sampling-rate", "--h"]
    h = number(1e-3, 1.0) if fast and draw(st.integers(0, 7)) != 1 else number(1e-5, 1.0)
    pairs += [("--sampling-rate", number(1e-6, 1.0)), ("--h", h)]
    for p in cls.params:
        if p.key != main and p.span is not None:
            pairs.append((f"--{p.key}", _param_space(p)))
            optional.append(f"--{p.key}")
    if fast:
        optional.remove("--h")  # always a grid width: the automatic one aims at 1M bins (~1 s)
    args = ["mechanism", kind, *draw(_flags(pairs, optional=tuple(optional)))]
    if draw(st.integers(0, 12 if fast else 6 if not wide else 3)) == 1:
        args.append("--compare")
    return args + draw(budget())


@st.composite
def attack(draw, kind: str | None = None) -> list[str]:
    """``attack KIND``: small k and trials (a call takes well under a second), the mechanism's main
    flag, its other flags sometimes (a canonical pair's δ0 up to 1 − 1e-9: trials that are all
    infinite), δ anywhere, the confidence and Poisson rate sometimes; sometimes more than 8,000 trials
    (the curve's thresholds are then quantiles), rarely beyond the maximum."""
    kind = kind or draw(st.sampled_from(attackable()))
    cls = MECHANISMS[kind]
    main = next(p for p in cls.params if p.key == cls.required[0])
    trials = st.one_of(st.integers(100, 3_000).map(str), st.integers(100, 3_000).map(str),
                       st.integers(8_001, 20_000).map(str), count(3_000, rare=True),
                       st.sampled_from(("50", "20000000", "1e3", "0")))
    pairs = [(f"--{main.key}", _param_space(main)), ("--k", count(30)), ("--trials", trials),
             ("--seed", count(10**6)), ("--delta", probability()),
             ("--confidence", number(0.4, 0.9999999, log=False)), ("--sampling-rate", number(1e-4, 1.0))]
    optional = ["--confidence", "--sampling-rate"]
    for p in cls.params:
        if p.key != main.key and (p.span is not None or p.key == "delta0"):
            near_one = st.sampled_from(("0", "0.5", "0.999", "0.99999", "0.999999999"))
            space = _param_space(p) if p.span is not None else st.one_of(probability(), near_one, near_one)
            pairs.append((f"--{p.key}", space))
            optional.append(f"--{p.key}")
    return ["attack", kind, *draw(_flags(pairs, optional=tuple(optional)))]
