"""Priors and allowed sets typed as text (issue 12 item 4): the Database priors page's inputs, the
URL keys and the command-line flags read them with these parsers (docs/MATH.md §15).

A prior over membership vectors b ∈ {0,1}^k (HBW Def. 3) is typed as one of

* a named prior: ``zero`` (0⃗, in no database), ``one`` (1⃗), ``uniform-nonzero`` (U(B∖{0⃗}),
  HBW §V-B), ``at-least:K2`` (U{|b| ≥ K2}) or ``below:K2`` (U{|b| < K2}) (HBW §III-A Ex. 2);
* weights over |b|: ``1:0.5, 2:0.3, 3-5:0.2`` — |b| = j with that weight (a range lo-hi shares
  its weight evenly among its sizes), uniform over the b of each size (``hypotheses.exchangeable``);
* weights over b (k ≤ 16): ``0110:0.5, 1001:0.5`` — each b a string of k digits 0/1
  (``hypotheses.explicit``).

Weights are positive numbers, scaled to sum to 1; an entry without ``:w`` has weight 1, so
``0110, 1001`` is uniform over the two. An allowed set (HBW §V-A, the membership vectors a person
may have) is typed as vectors: ``1100, 0011, 0000``. Bad text gets one message naming the field
and the form it takes (``ParameterError``).
"""

from __future__ import annotations

import math
import re

import numpy as np

from dpviz.gce import hypotheses
from dpviz.gce.hypotheses import EXPLICIT_K_MAX, Exchangeable, Explicit, Hypothesis
from dpviz.validation import ParameterError, check_count

NAMED = ("zero", "one", "uniform-nonzero", "at-least:K2", "below:K2")
PRIOR_FORM = ("zero, one, uniform-nonzero, at-least:K2, below:K2, weights over |b| such as "
              "'1:0.5, 2-4:0.5' (0 ≤ |b| ≤ k), or over b such as '0110:0.5, 1001:0.5' (k ≤ "
              f"{EXPLICIT_K_MAX} digits 0/1 each)")
ALLOWED_FORM = (f"membership vectors such as '1100, 0011, 0000' (2 to {EXPLICIT_K_MAX} digits 0/1, "
                "all equally long)")
_SPLIT = re.compile(r"[,;\s]+")


def _entries(text: str) -> list[str]:
    return [e for e in _SPLIT.split(text.replace(" :", ":").replace(": ", ":").strip()) if e]


def _named(text: str, *, k: int, field: str) -> Hypothesis | None:
    name, _, arg = text.partition(":")
    if name == "zero" and not arg:
        return hypotheses.point_zero(k=k)
    if name == "one" and not arg:
        return hypotheses.point_one(k=k)
    if name == "uniform-nonzero" and not arg:
        return hypotheses.uniform_nonzero(k=k)
    if name in ("at-least", "below"):
        k2 = check_count(arg, field=f"{field} {name}:K2", maximum=k)
        return (hypotheses.at_least if name == "at-least" else hypotheses.below)(k=k, k2=k2)
    return None


def _weight(text: str, *, field: str, entry: str) -> float:
    try:
        w = float(text)
    except ValueError:
        w = math.nan
    if not (math.isfinite(w) and w > 0):
        raise ParameterError(field, entry, "weights that are positive numbers, e.g. '2:0.5'")
    return w


def parse_prior(text: object, *, k: int, field: str = "prior") -> Hypothesis:
    """The prior typed as ``text`` for k databases (module docstring)."""
    k = check_count(k, field="k")
    raw = str(text).strip()
    if not raw:
        raise ParameterError(field, text, PRIOR_FORM)
    named = _named(raw.lower(), k=k, field=field) if "," not in raw else None
    if named is not None:
        return named
    levels: dict[int, float] = {}
    vectors: dict[tuple[int, ...], float] = {}
    for entry in _entries(raw):
        key, sep, w_text = entry.partition(":")
        w = _weight(w_text, field=field, entry=entry) if sep else 1.0
        if set(key) <= {"0", "1"} and len(key) >= 2 and (len(key) == k or key.startswith("0")):
            if len(key) != k:  # "0110" is a vector, never the size 110
                raise ParameterError(field, entry, f"vectors b of exactly k = {k} digits 0/1 (k ≤ "
                                     f"{EXPLICIT_K_MAX}), or sizes |b| from 0 to k")
            if k > EXPLICIT_K_MAX:
                raise ParameterError(field, entry, f"weights over b only for k ≤ {EXPLICIT_K_MAX}; "
                                     "for more databases type weights over |b|")
            bits = tuple(int(c) for c in key)
            vectors[bits] = vectors.get(bits, 0.0) + w
            continue
        span = re.fullmatch(r"(\d+)(?:-(\d+))?", key)
        if span is None:
            raise ParameterError(field, entry, PRIOR_FORM)
        lo, hi = int(span.group(1)), int(span.group(2) or span.group(1))
        if not 0 <= lo <= hi <= k:
            raise ParameterError(field, entry, f"sizes |b| from 0 to k = {k} (a range lo-hi with lo ≤ hi), "
                                 f"or vectors of exactly k = {k} digits 0/1")
        for j in range(lo, hi + 1):  # a range shares its weight evenly among its sizes
            levels[j] = levels.get(j, 0.0) + w / (hi - lo + 1)
    if levels and vectors:
        raise ParameterError(field, raw, "weights over |b| or over b, not both in one prior")
    if vectors:
        total = math.fsum(vectors.values())
        return hypotheses.explicit([(b, w / total) for b, w in vectors.items()], label=f"typed: {raw}")
    total = math.fsum(levels.values())
    weights = np.zeros(k + 1)
    for j, x in levels.items():
        weights[j] = x / total
    weights /= math.fsum(weights)  # exactly 1 within rounding
    return hypotheses.exchangeable(k=k, level_weights=weights.tolist(), label=f"typed: {raw}")


def parse_allowed(text: object, *, field: str = "allowed") -> tuple[tuple[int, ...], ...]:
    """The allowed set typed as ``text``: vectors of one length 2..16, each entry 0 or 1."""
    raw = str(text).strip()
    rows = _entries(raw)
    if not rows or any(not set(r) <= {"0", "1"} for r in rows):
        raise ParameterError(field, text, ALLOWED_FORM)
    sizes = {len(r) for r in rows}
    if len(sizes) != 1 or not 2 <= sizes.pop() <= EXPLICIT_K_MAX:
        raise ParameterError(field, text, ALLOWED_FORM)
    return tuple(dict.fromkeys(tuple(int(c) for c in r) for r in rows))


def check_prior_text(value: object, *, field: str = "prior") -> str:
    """A prior's text checked on its own (a URL value or flag, before k is read): its form, with
    k taken from the text (the vectors' length, else the largest size named); the view parses it
    again against the k given."""
    text = str(value).strip()
    parse_prior(text, k=_k_of(text), field=field)
    return text


def check_allowed_text(value: object, *, field: str = "allowed") -> str:
    """An allowed set's text checked (``parse_allowed``), returned stripped."""
    text = str(value).strip()
    parse_allowed(text, field=field)
    return text


def _k_of(text: str) -> int:
    keys = [e.partition(":")[0] for e in _entries(text)]
    lengths = {len(x) for x in keys if len(x) >= 2 and set(x) <= {"0", "1"}}
    if len(lengths) == 1 and all(len(x) >= 2 and set(x) <= {"0", "1"} for x in keys):
        return lengths.pop()
    named = re.fullmatch(r"(?:at-least|below):(\d+)", text.strip().lower())
    numbers = [int(x) for x in re.findall(r"\d+", named.group(1) if named else " ".join(keys))]
    return min(max(numbers, default=1), 10_000_000) or 1


def support_distance(p0: Hypothesis, p1: Hypothesis) -> int:
    """The largest number of databases in which a b of p0's support and a b of p1's differ: only
    that many mechanisms can tell the two apart (any coupling of the priors, HBW §V-A)."""
    if isinstance(p0, Exchangeable) and isinstance(p1, Exchangeable):
        k = p0.k
        return int(max(min(j0 + j1, 2 * k - j0 - j1) for j0 in p0.levels for j1 in p1.levels))
    e0, e1 = hypotheses.to_explicit(p0), hypotheses.to_explicit(p1)
    b0 = np.asarray([b for b, _ in e0.support])
    b1 = np.asarray([b for b, _ in e1.support])
    return int((b0[:, None, :] != b1[None, :, :]).sum(axis=2).max())


def as_pair(p0: Hypothesis, p1: Hypothesis) -> tuple[Hypothesis, Hypothesis]:
    """Both exchangeable, or both explicit (an exchangeable one enumerated, k ≤ 16)."""
    if isinstance(p0, Explicit) or isinstance(p1, Explicit):
        if p0.k != p1.k:
            raise ParameterError("prior", f"k = {p0.k} and k = {p1.k}",
                                 "two priors over the same k databases")
        return hypotheses.to_explicit(p0), hypotheses.to_explicit(p1)
    return p0, p1
