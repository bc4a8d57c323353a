"""Declarative parameter specs: one spec gives the widget label, the URL key, the CLI
option, the default and the check (Streamlit-free, shared by pages and the CLI)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from dpviz.budget import from_seconds
from dpviz.composition.levels import Level, Levels, as_levels, parse_levels
from dpviz.validation import ParameterError, check_count, check_delta, check_epsilon, check_probability


@dataclass(frozen=True)
class Param:
    """A parameter: ``key`` is the URL query key and, with ``-`` for ``_``, the CLI flag
    (``dpviz.cli.flags``); ``label`` names the widget, ``help`` explains it on the page and in
    ``--help``; ``check`` turns typed text into the value or raises ``ParameterError``."""

    key: str
    label: str
    default: Any
    check: Callable[[Any], Any]
    help: str = ""
    span: tuple[float, float] | None = None
    """Where inputs are drawn from (log-uniform) by tests that sample a page or command: values
    a person typically uses, inside what ``check`` accepts."""

    def parse(self, raw: Any, *, name: str | None = None) -> Any:
        """The checked value of ``raw``; a ``ParameterError`` about the whole value names ``name``
        (the CLI's flag) or else the label the user sees; one about a part (a cell) keeps its name."""
        try:
            return self.check(raw)
        except ParameterError as exc:
            shown = name or self.label
            if exc.field == shown or exc.value != raw:
                raise
            raise ParameterError(shown, exc.value, exc.allowed) from None


def in_words(exc: ParameterError, params: Iterable[Param]) -> ParameterError:
    """``exc`` naming the label the user sees: a field that is a parameter's key (``sigma``,
    ``sampling_rate`` or ``sampling-rate``), or ends in one (``mix[1].sigma``), takes its label."""
    labels = {p.key: p.label for p in params}
    head, dot, last = exc.field.rpartition(".")
    key = last.replace("-", "_")
    if key not in labels:
        return exc
    return ParameterError(f"{head}{dot}{labels[key]}" if dot else labels[key], exc.value, exc.allowed)


def count_param(label: str, default: int | None, *, maximum: int, what: str) -> Param:
    """``k``, the number of composed steps, as one page words and bounds it."""
    return replace(K, label=label, default=default, check=partial(check_count, field="k", maximum=maximum),
                   help=f"Number of {what}, 1 to {maximum:,}.")


def check_sampling_rate(value: object) -> float:
    """A Poisson sampling rate q in (0, 1]; 1 (every record in every batch) is no subsampling."""
    return check_probability(value, field="sampling_rate")


SAMPLING_RATE = Param(
    "sampling_rate", "sampling rate q", 1.0, check_sampling_rate,
    "Poisson sampling rate q in (0, 1]: each record is in a step's batch with probability q "
    "(DP-SGD); 1, every record in every batch, is no subsampling.")
"""The one sampling-rate parameter (pages and CLI); q = 1 means no subsampling everywhere."""

SAMPLING_SCHEMES = ("Poisson", "fixed-size")
"""How a step's batch is drawn: each record with probability q, or m of n without replacement."""


def check_sampling_scheme(value: object) -> str:
    text = str(value).strip()
    if text not in SAMPLING_SCHEMES:
        raise ParameterError("sampling", value, " or ".join(SAMPLING_SCHEMES))
    return text


SAMPLING = Param("sampling", "subsampling", "Poisson", check_sampling_scheme,
                 "Poisson: each record is in a step's batch with probability q (add-remove or replace-one). "
                 "Fixed-size: a batch of m of the n records drawn without replacement, replace-one "
                 "neighbours (Balle-Barthe-Gaboardi 2018; Steinke §6.2): the same bound at q = m/n.")
BATCH_SIZE = Param("batch_size", "batch size m", 256, partial(check_count, field="batch size m"),
                   "Fixed-size sampling: a batch of m records drawn without replacement from the n "
                   "(with the dataset size n and replace-one neighbours; Balle-Barthe-Gaboardi 2018, "
                   "Steinke §6.2).", span=(10.0, 1000.0))
DATASET_SIZE = Param("dataset_size", "dataset size n", 60_000, partial(check_count, field="dataset size n"),
                     "Fixed-size sampling: the n records each batch is drawn from.", span=(2_000.0, 1e6))


def subsampling(q: float | None) -> float | None:
    """The rate a mechanism is subsampled at: ``None`` for no subsampling (q absent or 1)."""
    return None if q is None or q >= 1.0 else q


LEGACY_VALUES: dict[str, Callable[[str], str]] = {
    "sampling_rate": lambda text: "1" if _reads_zero(text) else text,
}
"""URL values of earlier versions in today's vocabulary: ``sampling_rate=0`` meant "no
subsampling" on the Mechanisms page and in the attack lab; today that is ``1``."""


def _reads_zero(text: str) -> bool:
    try:
        return float(text) == 0.0
    except ValueError:
        return False


def migrate(query: Mapping[str, str]) -> dict[str, str]:
    """``query`` with earlier values rewritten (``LEGACY_VALUES``): old links keep their meaning."""
    return {k: LEGACY_VALUES[k](v) if k in LEGACY_VALUES else v for k, v in query.items()}


EPS0 = Param("eps0", "ε0 (each mechanism)", 0.1, partial(check_epsilon, field="ε0"),
             "Privacy parameter ε0 of every composed mechanism, in [0, 100].")
DELTA0 = Param("delta0", "δ0 (each mechanism)", 0.001, partial(check_delta, field="δ0"),
               "Privacy parameter δ0 of every composed mechanism, in [0, 1); e.g. 1e-6.")
DELTA = Param("delta", "target total δ", 0.05, partial(check_delta, field="target δ", positive=False),
              "The total δ allowed after composition, in [0, 1).")
K = Param("k", "k (mechanisms composed)", 30, partial(check_count, field="k", maximum=1_000_000),
          "Number of composed mechanisms, 1 to 1,000,000.")
K_MAX = Param("k_max", "largest k plotted", 1000, partial(check_count, field="largest k", maximum=1_000_000),
              "Right end of the ε-against-k plot, 1 to 1,000,000.")
HETERO_LEVELS = Param("levels", "mechanisms (ε:δ:count, …)", "0.1:1e-6:30,0.5:0:10", parse_levels,
                      "For example 0.1:1e-6:30,0.5:0:10 — 30 mechanisms that are (0.1, 1e-6)-DP "
                      "and 10 that are 0.5-DP.")
HET_ROWS = Param("het_rows", "mechanisms (ε:δ:count, …)", "0.13:0:40,0.71:1e-6:5", parse_levels,
                 HETERO_LEVELS.help)
"""The Mechanisms page's heterogeneous rows (URL key ``het_rows``)."""
HETERO_DELTA = Param("hdelta", "target total δ (heterogeneous)", 1e-4,
                     partial(check_delta, field="target δ (heterogeneous)"))

# The curves view opens on pure ε0-DP at δ = 1e-5, where all four methods give a value
# for every k up to 1000 (with δ0 > 0, basic composition stops once kδ0 exceeds δ).
CURVES_DELTA0 = Param("delta0", "δ0 (each mechanism)", 0.0, DELTA0.check, DELTA0.help)
CURVES_DELTA = Param("delta", "target total δ", 1e-5, DELTA.check, DELTA.help)


def check_flag(value: object, *, field: str = "flag") -> bool:
    """true/false, 1/0, yes/no (URL and CLI spelling of a switch)."""
    from dpviz.validation import ParameterError

    text = str(value).strip().lower()
    if text in {"true", "1", "yes", "on"}:
        return True
    if text in {"false", "0", "no", "off"}:
        return False
    raise ParameterError(field, value, "true or false")


LOG_K = Param("log_k", "log k axis", True, partial(check_flag, field="log k axis"))

# --- Database priors (HBW generalized composition experiment) ---------------------------

GCE_DELTA0 = replace(DELTA0, default=0.0,
                     help="δ0 of every mechanism, in [0, 1). With δ0 > 0 the exact method needs k ≲ 2800 "
                          "(0⃗ against a prior) or k ≲ 290 (two composite priors).")
GCE_K = count_param("k (databases, one mechanism each)", 1000, maximum=100_000, what="databases")
CAP = Param("cap", "at most C databases per person", 365, partial(check_count, field="C", maximum=100_000),
            "C ≥ 1 and at most k.")
K2 = Param("k2", "k' (in at least k' databases)", 3, partial(check_count, field="k'", maximum=100_000),
           "1 ≤ k' ≤ k.")
COMMON = Param("common", "common feature columns", 4,
               partial(check_count, field="common columns", minimum=0, maximum=10_000))
FREE_ONLY = Param("free_only", "ad columns (free users)", 3,
                  partial(check_count, field="ad columns", minimum=0, maximum=10_000))
PAID_ONLY = Param("paid_only", "premium columns (paid users)", 5,
                  partial(check_count, field="premium columns", minimum=0, maximum=10_000))

# --- The CLI's own specs (``compose`` and ``gce``; flags from ``dpviz.cli.flags``) -------------
# Same keys, labels and checks as the pages'; where the CLI accepts more than a page (k up to
# 10,000,000, no default ε0 or k), a CLI spec is the page spec with that one thing replaced.

CLI_K = replace(K, check=partial(check_count, field="k"), default=None,
                help="Number of mechanisms, a whole number in [1, 10,000,000].")
CLI_EPS0 = replace(EPS0, default=None, help="Per-mechanism ε0, in [0, 100].")
CLI_DELTA0 = replace(CURVES_DELTA0, help="Per-mechanism δ0, in [0, 1).")
CLI_LEVELS = replace(HETERO_LEVELS, default=None,
                     help='Heterogeneous input "ε:δ:count,…" instead of --eps0/--delta0/--k.')
TARGET_DELTA = replace(DELTA, default=None, help="Target total δ, in [0, 1).")
TARGET_EPSILON = Param("epsilon", "target total ε", None,
                       partial(check_epsilon, field="epsilon", maximum=1e9),
                       "Target total ε, ≥ 0 (δ is then computed).")
BUDGET = Param("budget", "seconds of work", None, from_seconds,
               "Seconds of work allowed for the exact routes (default 60); beyond it the best bound that "
               "applies answers, with the reason.")
CLI_CAP = replace(CAP, check=partial(check_count, field="cap"), default=None,
                  help="At most C databases per person, a whole number ≥ 1 (C ≥ k: no constraint).")


def check_prior(value: object) -> str:
    """``uniform-nonzero`` or ``at-least:K2`` (K2 is checked against k where k is known)."""
    text = str(value)
    if text != "uniform-nonzero" and not text.startswith("at-least:"):
        raise ParameterError("prior", value, '"uniform-nonzero" or "at-least:K2"')
    if text.startswith("at-least:"):
        try:
            k2 = check_count(text.removeprefix("at-least:"), field="prior")
        except ParameterError:
            raise ParameterError("prior", value, '"uniform-nonzero" or "at-least:K2", K2 a whole number '
                                 "from 1 to k") from None
        text = f"at-least:{k2}"
    return text


PRIOR = Param("prior", "adversary prior", None, check_prior,
              '"uniform-nonzero" (0⃗ against U(B∖{0⃗})) or "at-least:K2" (U{|b| < K2} against U{|b| ≥ K2}).')


# --- Rows of (ε, δ, count) as typed in a table, and their URL form -----------------------

LEVEL_COLUMNS = ("ε", "δ", "count")
"""The columns of a heterogeneous-composition table, in URL order (``ε:δ:count``)."""

_COLUMN_OF_FIELD = {"eps0": "ε", "delta0": "δ", "k": "count"}  # ``Level``'s field names
_ROWS_ALLOWED = 'rows "ε:δ:count" separated by commas, e.g. "0.1:1e-6:30,0.5:0:10"'
_ESCAPES = (("%", "%25"), (",", "%2C"), (":", "%3A"))

Row = tuple[str, str, str]


def _escape(cell: str) -> str:
    for raw, esc in _ESCAPES:
        cell = cell.replace(raw, esc)
    return cell


def _unescape(cell: str) -> str:
    for raw, esc in reversed(_ESCAPES):
        cell = cell.replace(esc, raw).replace(esc.lower(), raw)
    return cell


def rows_text(rows: list[Row]) -> str:
    """The URL form of table rows: ``ε:δ:count`` rows joined by commas, every cell as typed
    (a ``%``, ``,`` or ``:`` inside a cell is percent-escaped, so any text comes back the same)."""
    return ",".join(":".join(_escape(c) for c in row) for row in rows)


def text_rows(text: str) -> list[Row]:
    """The rows of ``rows_text`` (and of ``parse_levels``'s format): a row that is not three
    fields raises ``ParameterError`` naming ``levels``; ``""`` is a table without rows."""
    out: list[Row] = []
    for row in str(text).split(","):
        if not row.strip():
            continue  # "0.1:0:3," or "": a comma too many, as parse_levels allows
        parts = row.split(":")
        if len(parts) != len(LEVEL_COLUMNS):
            raise ParameterError("levels", row, _ROWS_ALLOWED)
        out.append(tuple(_unescape(p) for p in parts))  # type: ignore[arg-type]
    return out


def row_levels(rows: list[Row]) -> tuple[Levels | None, list[ParameterError]]:
    """Validate table rows with the core's checks (``Level``, ``as_levels``): the levels, or
    None and one error per bad cell, named like ``ε (row 2)``. Rows left wholly empty (a row
    just added) are skipped; no row at all is an error."""
    levels: list[Level] = []
    problems: list[ParameterError] = []
    for i, row in enumerate(rows, start=1):
        cells = dict(zip(LEVEL_COLUMNS, (c.strip() for c in row), strict=True))
        if not any(cells.values()):
            continue
        checks = (("ε", check_epsilon), ("δ", check_delta), ("count", check_count))
        bad = False
        for column, check in checks:
            try:
                check(cells[column], field=f"{column} (row {i})")
            except ParameterError as exc:
                problems.append(exc)
                bad = True
        if not bad:
            try:
                levels.append(Level(epsilon=cells["ε"], delta=cells["δ"], count=cells["count"]))  # type: ignore[arg-type]
            except ParameterError as exc:  # the core's own check, should it be stricter
                column = _COLUMN_OF_FIELD.get(exc.field, exc.field)
                problems.append(ParameterError(f"{column} (row {i})", exc.value, exc.allowed))
    if problems:
        return None, problems
    try:
        return as_levels(levels), []
    except ParameterError as exc:  # the table as a whole (too many mechanisms in all): its column
        column = "count (all rows)" if str(exc.value).startswith("total count") else "rows"
        return None, [ParameterError(column, exc.value, exc.allowed)]
