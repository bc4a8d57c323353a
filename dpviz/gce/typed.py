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
from collections.abc import Sequence
from functools import lru_cache
from typing import TypeVar

import numpy as np

from dpviz.gce import constraints, hypotheses
from dpviz.gce.hypotheses import EXPLICIT_K_MAX, Exchangeable, Explicit, Hypothesis
from dpviz.validation import ParameterError, check_count

T = TypeVar("T")

NAMED = ("zero", "one", "uniform-nonzero", "at-least:K2", "below:K2")
PRIOR_FORM = ("zero, one, uniform-nonzero, at-least:K2, below:K2, weights over |b| such as "
              "'1:0.5, 2-4:0.5' (0 ≤ |b| ≤ k), or over b such as '0110:0.5, 1001:0.5' (k ≤ "
              f"{EXPLICIT_K_MAX} digits 0/1 each)")
ALLOWED_FORM = (f"membership vectors such as '1100, 0011, 0000' (2 to {EXPLICIT_K_MAX} digits 0/1, "
                "all equally long)")
_SPLIT = re.compile(r"[,;\s]+")
_SIZES = re.compile(r"\d{1,18}(?:-\d{1,18})?")  # a size |b| or a range lo-hi (longer numbers exceed any k)


SIZES_COVERED_MAX = 100_000_000
"""Most sizes |b| the ranges of one typed prior may cover in total (counted before any range is
spread over its sizes: one vectorised add per range, about 0.1 s and one array of k + 1 floats)."""


def _entries(text: str) -> list[str]:
    return [e for e in _SPLIT.split(text.replace(" :", ":").replace(": ", ":").strip()) if e]


def _named(text: str, *, k: int | None, field: str) -> Hypothesis | str | None:
    """A named prior: built for ``k``, or (k unknown) its text once its form is checked."""
    name, _, arg = text.partition(":")
    if name in ("zero", "one", "uniform-nonzero") and not arg:
        if k is None:
            return text
        return {"zero": hypotheses.point_zero, "one": hypotheses.point_one,
                "uniform-nonzero": hypotheses.uniform_nonzero}[name](k=k)
    if name in ("at-least", "below"):
        if k is None:  # the form alone; the range names k when k is known
            try:
                check_count(arg, field=f"{field} {name}:K2")
            except ParameterError:
                raise ParameterError(f"{field} {name}:K2", arg, "a whole number from 1 to k") from None
            return text
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


Entry = tuple[str, float, str]
"""A typed entry: its key (a size, a range lo-hi, or digits 0/1), its weight, the entry as typed."""


def _form(raw: str, *, field: str) -> list[Entry]:
    """The entries of a prior typed as weights, checked for their form only: cost linear in the
    text, no range spread over its sizes (``1-10000000:1`` is three numbers until k is known)."""
    entries = []
    for entry in _entries(raw):
        key, sep, w_text = entry.partition(":")
        w = _weight(w_text, field=field, entry=entry) if sep else 1.0
        if not (set(key) <= {"0", "1"} and len(key) >= 2) and _SIZES.fullmatch(key) is None:
            raise ParameterError(field, entry, PRIOR_FORM)
        entries.append((key, w, entry))
    if not entries:  # ";" or "," alone
        raise ParameterError(field, raw, PRIOR_FORM)
    return entries


def parse_prior(text: object, *, k: int, field: str = "prior") -> Hypothesis:
    """The prior typed as ``text`` for k databases (module docstring). Every entry is checked
    against k, and the sizes the ranges cover are counted, before any range is spread out."""
    k = check_count(k, field="k")
    raw = str(text).strip()
    named = _named(raw.lower(), k=k, field=field) if raw and "," not in raw else None
    if isinstance(named, Exchangeable | Explicit):
        return named
    spans: list[tuple[int, int, float]] = []
    vectors: list[tuple[Sequence[int], float]] = []  # a vector typed twice is merged after scaling
    for key, w, entry in _form(raw, field=field):
        if set(key) <= {"0", "1"} and len(key) >= 2 and (len(key) == k or key.startswith("0")):
            if len(key) != k:  # "0110" is a vector, never the size 110
                raise ParameterError(field, entry, f"vectors b of exactly k = {k} digits 0/1 (k ≤ "
                                     f"{EXPLICIT_K_MAX}), or sizes |b| from 0 to k")
            if k > EXPLICIT_K_MAX:
                raise ParameterError(field, entry, f"weights over b only for k ≤ {EXPLICIT_K_MAX}; "
                                     "for more databases type weights over |b|")
            vectors.append((tuple(int(c) for c in key), w))
            continue
        lo_text, _, hi_text = key.partition("-")
        # digits 0/1 passed ``_form`` as a vector, unchecked as a size: one longer than ``_SIZES``
        # admits is above any k (and int() refuses over 4,300 digits)
        lo, hi = (int(lo_text), int(hi_text or lo_text)) if _SIZES.fullmatch(key) else (k + 1, k + 1)
        if not 0 <= lo <= hi <= k:
            raise ParameterError(field, entry, f"sizes |b| from 0 to k = {k} (a range lo-hi with lo ≤ hi), "
                                 f"or vectors of exactly k = {k} digits 0/1")
        spans.append((lo, hi, w))
    if spans and vectors:
        raise ParameterError(field, raw, "weights over |b| or over b, not both in one prior")
    if vectors:
        # scaled before ``explicit`` adds a vector's weights: 1.8e308 + 1e308 for one vector overflowed
        return hypotheses.explicit(_scaled(vectors, field=field), label=f"typed: {raw}")
    covered = sum(hi - lo + 1 for lo, hi, _ in spans)
    if covered > SIZES_COVERED_MAX:
        raise ParameterError(field, f"ranges covering {covered:,} sizes",
                             f"ranges covering at most {SIZES_COVERED_MAX:,} sizes |b| in total")
    weights = np.zeros(k + 1)
    for (lo, hi), x in _scaled([((lo, hi), w / (hi - lo + 1)) for lo, hi, w in spans], field=field):
        weights[lo:hi + 1] += x  # a range shares its weight evenly among its sizes
    weights /= math.fsum(weights)
    return hypotheses.exchangeable(k=k, level_weights=weights, label=f"typed: {raw}")


def _scaled(items: list[tuple[T, float]], *, field: str) -> list[tuple[T, float]]:
    """Weights divided by the largest, so that any finite positive weights sum without overflow
    (two weights of 1e308 overflowed ``math.fsum``); summing to 1 within rounding."""
    top = max(w for _, w in items)
    out = [(key, w / top) for key, w in items]
    if any(x == 0.0 for _, x in out):
        raise ParameterError(field, f"weights from {min(w for _, w in items):g} to {top:g}",
                             "weights within a factor of 10^300 of each other")
    total = math.fsum(x for _, x in out)
    return [(key, x / total) for key, x in out]


def parse_allowed(text: object, *, field: str = "allowed") -> tuple[tuple[int, ...], ...]:
    """The allowed set typed as ``text``: vectors of one length 2..16, each entry 0 or 1 (the
    distinct ones, in order). Remembered for the last few texts: a view asks again for each point
    of its series, and 7,200 vectors took 0.1 s each time."""
    raw = str(text).strip()
    rows = _distinct_rows(raw)
    if not rows or any(not set(r) <= {"0", "1"} for r in rows):
        raise ParameterError(field, text, ALLOWED_FORM)
    sizes = {len(r) for r in rows}
    if len(sizes) != 1 or not 2 <= sizes.pop() <= EXPLICIT_K_MAX:
        raise ParameterError(field, text, ALLOWED_FORM)
    return _vectors(rows)


@lru_cache(maxsize=8)
def _distinct_rows(raw: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_entries(raw)))


@lru_cache(maxsize=8)
def _vectors(rows: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(map(int, r)) for r in rows)


def check_prior_text(value: object, *, field: str = "prior") -> str:
    """A prior's text checked on its own (a URL value or flag, before k is read): its form only,
    in time linear in its length (no range is spread over its sizes); the view parses it again
    against the k given, which names k in its messages."""
    text = str(value).strip()
    if "," in text or _named(text.lower(), k=None, field=field) is None:
        _form(text, field=field)
    return text


def check_allowed_text(value: object, *, field: str = "allowed") -> str:
    """An allowed set's text checked (``parse_allowed``), returned stripped."""
    text = str(value).strip()
    parse_allowed(text, field=field)
    return text


def support_distance(p0: Hypothesis, p1: Hypothesis) -> int:
    """The largest number of databases in which a b of p0's support and a b of p1's differ: only
    that many mechanisms can tell the two apart (any coupling of the priors, HBW §V-A)."""
    if isinstance(p0, Exchangeable) and isinstance(p1, Exchangeable):
        # max over sizes j0, j1 of min(j0 + j1, 2k − j0 − j1), which peaks at j0 + j1 = k: for each
        # j0 the j1 of p1 nearest k − j0 from either side (all pairs were |levels|² steps)
        k, j0, j1 = p0.k, p0.levels, p1.levels
        at = np.searchsorted(j1, k - j0)
        near = np.concatenate([j1[np.clip(at, 0, j1.size - 1)], j1[np.clip(at - 1, 0, j1.size - 1)]])
        s = np.concatenate([j0, j0]) + near
        return int(np.minimum(s, 2 * k - s).max())
    e0, e1 = hypotheses.to_explicit(p0), hypotheses.to_explicit(p1)
    return constraints.hamming_diameter(np.asarray([b for b, _ in e0.support]),
                                        np.asarray([b for b, _ in e1.support]))


def as_pair(p0: Hypothesis, p1: Hypothesis) -> tuple[Hypothesis, Hypothesis]:
    """Both exchangeable, or both explicit (an exchangeable one enumerated, k ≤ 16)."""
    if isinstance(p0, Explicit) or isinstance(p1, Explicit):
        if p0.k != p1.k:
            raise ParameterError("prior", f"k = {p0.k} and k = {p1.k}",
                                 "two priors over the same k databases")
        return hypotheses.to_explicit(p0), hypotheses.to_explicit(p1)
    return p0, p1
