"""What a user carries away: CSV tables, JSON payloads and their file names.

One place writes every CSV (Python's ``csv`` writer: a note with a comma stays one cell)
and every JSON payload (strict JSON: no NaN or Infinity), for the pages' download buttons
and ``python -m dpviz figure --out x.csv|x.json`` alike. No Streamlit, no plotting.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dpviz.guarantee import finite_or_none
from dpviz.results import Result

__all__ = ["STEM_MAX", "columns_csv", "file_stem", "latex_text", "payload_json", "table_caption",
           "table_latex", "table_markdown"]

STEM_MAX = 150
"""Longest file stem; a longer one is cut and ends with a hash of every parameter."""


def columns_csv(columns: Mapping[str, Sequence[Any] | np.ndarray]) -> bytes:
    """CSV (RFC 4180 quoting, ``\\r\\n`` rows as the ``csv`` module writes them) of equal-length
    columns: a header of the column names, then one row per index. Numbers keep full precision
    (``repr``); NaN, ±inf and ``None`` are written as empty cells (no value)."""
    names = list(columns)
    values = [np.asarray(columns[n], dtype=object).ravel() for n in names]
    lengths = {len(v) for v in values}
    if len(lengths) > 1:
        sizes = ", ".join(f"{n}: {len(v)}" for n, v in zip(names, values, strict=True))
        raise ValueError(f"CSV columns must have equal lengths ({sizes})")
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_MINIMAL)
    writer.writerow(names)
    writer.writerows([_csv_cell(v) for v in row] for row in zip(*values, strict=True))
    return buf.getvalue().encode("utf-8")


def _csv_cell(v: Any) -> str:
    """One cell: full-precision numbers, empty for no value."""
    if v is None:
        return ""
    if isinstance(v, bool | np.bool_):
        return str(bool(v))
    if isinstance(v, float | np.floating):
        return repr(float(v)) if math.isfinite(v) else ""
    if isinstance(v, int | np.integer):
        return str(int(v))
    return str(v)


def payload_json(payload: Mapping[str, Any]) -> str:
    """Strict JSON (indented) of a view's payload: numpy values become plain numbers and lists,
    non-finite numbers become ``null`` (no value), results (``dpviz.results``) their ``to_json()``."""
    return json.dumps(_jsonable(payload), indent=2, allow_nan=False, ensure_ascii=False)


def _jsonable(obj: Any) -> Any:
    """``obj`` with every value JSON can hold exactly (strict: NaN and ±inf become ``None``)."""
    if obj is None or isinstance(obj, str | bool):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return finite_or_none(float(obj))
    if isinstance(obj, Result):  # every answer serialises itself once (dpviz.results)
        return _jsonable(obj.to_json())
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return [_jsonable(v) for v in obj.tolist()] if obj.ndim else _jsonable(obj.item())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _jsonable(dataclasses.asdict(obj))
    if isinstance(obj, Sequence | set | frozenset):
        return [_jsonable(v) for v in obj]
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_stem(view_name: str, values: Mapping[str, Any]) -> str:
    """A file name without extension that carries every input: ``dpviz_<view>_<key-value>_…``
    in sorted key order, only ``[A-Za-z0-9._-]``. Deterministic; different inputs give different
    stems (a stem that had to be shortened or made safe ends with a hash of the full text)."""
    full = "_".join([f"dpviz_{view_name}", *(f"{k}-{_token(values[k])}" for k in sorted(values))])
    safe = _SAFE.sub("_", full).strip("._-") or "dpviz"
    if safe == full and len(safe) <= STEM_MAX:
        return safe
    digest = hashlib.sha256(full.encode("utf-8")).hexdigest()[:10]
    return f"{safe[:STEM_MAX - len(digest) - 1].rstrip('._-')}_{digest}"


def _token(v: Any) -> str:
    """A parameter value as text: shortest round-trip floats, ``none`` for no value."""
    if v is None:
        return "none"
    if isinstance(v, bool | np.bool_):
        return "true" if v else "false"
    if isinstance(v, int | np.integer):
        return str(int(v))
    if isinstance(v, float | np.floating):
        return repr(float(v))
    if isinstance(v, str):
        return v
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return "~".join(_token(x) for x in dataclasses.asdict(v).values())
    if isinstance(v, Mapping):
        return "~".join(f"{k}~{_token(v[k])}" for k in sorted(v))
    if isinstance(v, Sequence | np.ndarray):
        return "+".join(_token(x) for x in v)
    return str(v)


# --- Tables for reports: LaTeX (booktabs) and Markdown -------------------------------------------
# The rows are the page's display rows (``dpviz.figures.tables``): every number already rounded in
# its sound direction (an upper bound up, a lower bound down), '—' where there is no value, and the
# source column citing the theorem of each row. Nothing is rounded again here.

_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}
_LATEX_UNICODE = {
    "ε": r"$\varepsilon$", "δ": r"$\delta$", "Δ": r"$\Delta$", "σ": r"$\sigma$", "μ": r"$\mu$",
    "ρ": r"$\rho$", "α": r"$\alpha$", "β": r"$\beta$", "λ": r"$\lambda$", "π": r"$\pi$", "η": r"$\eta$",
    "γ": r"$\gamma$", "ℓ": r"$\ell$", "≤": r"$\le$", "≥": r"$\ge$", "≈": r"$\approx$", "∈": r"$\in$",
    "∞": r"$\infty$", "·": r"$\cdot$", "×": r"$\times$", "−": r"$-$", "±": r"$\pm$", "→": r"$\to$",
    "√": r"$\surd$", "∖": r"$\setminus$", "⃗": "", "̂": "", "′": r"$'$", "—": "---", "–": "--",
    "…": r"\dots{}", "§": r"\S{}", "“": "``", "”": "''", "‘": "`", "’": "'",
    "✓": r"\textsf{yes}", "✗": r"\textsf{no}",
    "\u200b": "", "\u2011": "-", "\u00a0": "~", "⁻": r"$^{-}$",
    **{d: f"$^{{{i}}}$" for i, d in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")},
    **{d: f"$_{{{i}}}$" for i, d in enumerate("₀₁₂₃₄₅₆₇₈₉")},
}


_GREEK_AS_LATIN = {"Alpha": "A", "Beta": "B", "Epsilon": "E", "Zeta": "Z", "Eta": "H", "Iota": "I",
                   "Kappa": "K", "Mu": "M", "Nu": "N", "Omicron": "O", "Rho": "P", "Tau": "T", "Chi": "X",
                   "omicron": "o"}
"""Greek letters LaTeX has no command for: they look like these Latin ones."""


def _greek(ch: str) -> str | None:
    """A Greek letter as LaTeX math (``Σ`` → ``$\\Sigma$``), or None for any other character."""
    name = unicodedata.name(ch, "")
    match = re.fullmatch(r"GREEK (SMALL|CAPITAL) LETTER ([A-Z]+)", name)
    if match is None:
        return None
    word = match.group(2).lower() if match.group(1) == "SMALL" else match.group(2).title()
    word = {"lamda": "lambda", "Lamda": "Lambda"}.get(word, word)
    return _GREEK_AS_LATIN.get(word) or f"$\\{word}$"


def latex_text(text: str) -> str:
    """Table text as LaTeX that compiles with the base distribution (pdflatex, no Unicode
    setup): LaTeX's special characters escaped, Greek letters and symbols as math, Latin-1
    letters kept (UTF-8 input is LaTeX's default); any other character is written as its code
    point, ``\texttt{U+4E2D}`` (shown, never a compile error)."""
    out = []
    for ch in text:
        if ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ch in _LATEX_UNICODE:
            out.append(_LATEX_UNICODE[ch])
        elif ord(ch) < 0x180:
            out.append(ch)
        else:
            out.append(_greek(ch) or f"\\texttt{{U+{ord(ch):04X}}}")
    return "".join(out)


def _numeric(rows: Sequence[Mapping[str, str]], column: str) -> bool:
    """Every cell a number or '—' (no value): the column is right-aligned."""
    cells = [str(r.get(column, "")) for r in rows]
    try:
        return all(c == "—" or math.isfinite(float(c.replace(",", ""))) for c in cells)
    except ValueError:
        return False


NOTE_WIDTH = r"0.4\linewidth"
"""Width of a source / note column in LaTeX (wrapped): the theorems a row cites."""


def table_latex(rows: Sequence[Mapping[str, str]], *, caption: str, label: str) -> str:
    """A ``table`` with a booktabs ``tabular`` (\\toprule, \\midrule, \\bottomrule) of the display
    rows, numbers right-aligned, a long source / note column wrapped, the caption stating the view
    and every parameter (a table pasted into a report stands alone). Needs \\usepackage{booktabs}."""
    if not rows:
        raise ValueError("a table needs at least one row")
    columns = list(rows[0])
    spec = "".join("r" if _numeric(rows, c) else (f"p{{{NOTE_WIDTH}}}" if "note" in c or c == "check"
                                                   else "l") for c in columns)
    body = [" & ".join(latex_text(str(r.get(c, ""))) for c in columns) + r" \\" for r in rows]
    return "\n".join([
        r"% dpviz table: needs \usepackage{booktabs}",
        r"\begin{table}[htbp]",
        r"\centering\small",
        rf"\caption{{{latex_text(caption)}}}",
        rf"\label{{{_SAFE.sub('-', label)}}}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(latex_text(c) for c in columns) + r" \\",
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}",
        r"\end{table}",
        "",
    ])


def _markdown_cell(text: str) -> str:
    """A cell of a pipe table: '|' escaped, line breaks as spaces."""
    return re.sub(r"[\r\n]+", " ", text).replace("\\", "\\\\").replace("|", "\\|")


def table_markdown(rows: Sequence[Mapping[str, str]], *, caption: str) -> str:
    """A GitHub-flavoured Markdown pipe table of the display rows (numbers right-aligned), below
    its caption in bold (the view and every parameter)."""
    if not rows:
        raise ValueError("a table needs at least one row")
    columns = list(rows[0])
    align = ["---:" if _numeric(rows, c) else "---" for c in columns]
    lines = [f"**{_markdown_cell(caption)}**", "",
             "| " + " | ".join(_markdown_cell(c) for c in columns) + " |",
             "| " + " | ".join(align) + " |",
             *("| " + " | ".join(_markdown_cell(str(r.get(c, ""))) for c in columns) + " |" for r in rows)]
    return "\n".join(lines) + "\n"


def table_caption(title: str, table: str, values: Mapping[str, Any]) -> str:
    """"dpviz, <view>: <table> (k = 30, eps0 = 0.1, …)": the view, the table and every input."""
    shown = ", ".join(f"{k} = {_token(values[k])}" for k in sorted(values))
    return f"dpviz, {title}: {table.replace('_', ' ')} ({shown})"
