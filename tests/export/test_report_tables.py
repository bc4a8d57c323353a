"""Tables for reports (issue 21 item 9): every view's display tables as LaTeX booktabs and Markdown,
round trip. The LaTeX compiles with pdflatex (Debian's texlive-latex-base; booktabs.sty comes with
texlive-latex-recommended, both installed by scripts/test.sh) and is parsed back, the Markdown is
parsed back, and every cell, every number included, is the page's; numbers keep the page's rounding
in the sound direction (an upper bound never below the computed value, a lower bound never above);
each row cites its source; the CLI writes the same bytes; the Cite box's BibTeX covers the sources."""

from __future__ import annotations

import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest

from dpviz import export, references
from dpviz.cli import main
from dpviz.views.catalog import registry

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"mechanisms": {"k": 20}, "attack": {"trials": 2000}}
"""Cheap settings for the views whose defaults take seconds (the tables are the same kind)."""
MORE = [("curves", {"delta": 1e-4, "delta0": 1e-3}),  # rows without a value: reasons with Σ, ≥
        ("priors", {"delta": 0.0}),
        ("mechanisms", {"k": 20, "mechanism": "laplace"})]
"""Settings whose rows hold other words and symbols (no value, its reason)."""


def _tables() -> list[tuple[str, str, list[dict[str, str]], str]]:
    """(view, table, rows, caption) for every non-empty display table of every view."""
    out = []
    specs = registry()
    for name, over in [*((n, SMALL.get(n, {})) for n in specs), *MORE]:
        spec = specs[name]
        values = {**spec.defaults(), **over}
        view = spec.build(**values)
        for table, rows in view.tables.items():
            if rows:
                out.append((name, table, rows, export.table_caption(spec.title, table, values)))
    return out


TABLES = _tables()


def test_every_view_with_a_table_is_covered():
    assert {view for view, *_ in TABLES} >= {"curves", "priors", "mechanisms", "planner"}


def _unlatex(text: str) -> str:
    """The cell text back from its LaTeX (the inverse of ``export.latex_text`` on table cells)."""
    plain = {"", "'", "`", "''", "``", "-", "~"}  # spellings that are also ordinary text: not inverted
    back = {v: k for k, v in export._LATEX_UNICODE.items() if v not in plain}
    back |= {v: k for k, v in export._LATEX_SPECIAL.items()}
    for spelled in sorted(back, key=len, reverse=True):
        text = text.replace(spelled, back[spelled])
    def greek(m: re.Match[str]) -> str:
        case = "CAPITAL" if m[1][0].isupper() else "SMALL"
        return unicodedata.lookup(f"GREEK {case} LETTER {m[1].upper().replace('LAMBDA', 'LAMDA')}")

    return re.sub(r"\$\\([A-Za-z]+)\$", greek, text)


def _latex_rows(tex: str) -> tuple[list[str], list[list[str]]]:
    body = tex.split(r"\toprule", 1)[1].split(r"\bottomrule", 1)[0]
    head, rows = body.split(r"\midrule")
    split = lambda line: [c.strip() for c in re.split(r"(?<!\\)&", line.strip().removesuffix(r"\\"))]  # noqa: E731
    return split(head), [split(line) for line in rows.strip().splitlines()]


def _markdown_rows(md: str) -> tuple[list[str], list[list[str]]]:
    lines = [line for line in md.splitlines() if line.startswith("|")]
    split = lambda line: [c.strip().replace("\\|", "|").replace("\\\\", "\\")  # noqa: E731
                          for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
    return split(lines[0]), [split(line) for line in lines[2:]]


def _same(shown: str, want: str) -> None:
    """A cell read back is the page's cell; a number is the same number."""
    assert shown == want, (shown, want)
    try:
        number = float(want.replace(",", ""))
    except ValueError:
        return
    assert float(shown.replace(",", "")) == number


@pytest.mark.parametrize("view,table,rows,caption", TABLES, ids=[f"{v}-{t}-{i}" for i, (v, t, *_) in
                                                                  enumerate(TABLES)])
def test_latex_and_markdown_read_back_cell_for_cell(view, table, rows, caption):
    columns = list(rows[0])
    for text, read in ((export.table_latex(rows, caption=caption, label=f"{view}-{table}"), _latex_rows),
                       (export.table_markdown(rows, caption=caption), _markdown_rows)):
        head, body = read(text)
        if read is _latex_rows:
            head, body = [_unlatex(c) for c in head], [[_unlatex(c) for c in r] for r in body]
        assert head == columns
        assert len(body) == len(rows)
        for got, row in zip(body, rows, strict=True):
            for cell, column in zip(got, columns, strict=True):
                _same(cell, str(row[column]).replace("\u200b", ""))
    tex = export.table_latex(rows, caption=caption, label=f"{view}-{table}")
    assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex
    assert "k = " in caption or "eps0 = " in caption or "alice" in caption  # the inputs are named


def test_each_row_cites_its_source():
    cites = re.compile(r"KOV|HBW|Steinke|Roth|DRV|McSherry|Meiser|PLD|Thm|Prop|Cor|§")
    for view, table, rows, _ in TABLES:
        if view in ("curves", "priors", "mechanisms", "planner"):
            for row in rows:
                assert cites.search(" ".join(row.values())), (view, table, row)


def test_numbers_keep_the_sound_direction():
    """The mechanisms table: ε upper shown ≥ computed upper, ε lower shown ≤ computed lower."""
    spec = registry()["mechanisms"]
    view = spec.build(**{**spec.defaults(), "k": 20})
    results = view.payload["results"]
    md = export.table_markdown(view.tables["comparison"], caption="x")
    _, body = _markdown_rows(md)
    columns = list(view.tables["comparison"][0])
    checked = 0
    for cells, key in zip(body, results, strict=True):
        row = dict(zip(columns, cells, strict=True))
        g = results[key]
        if g["upper"] is not None and row["ε upper"] != "—":
            assert float(row["ε upper"]) >= g["upper"]
            checked += 1
        if g["lower"] is not None and row["ε lower"] != "—":
            assert float(row["ε lower"]) <= g["lower"]
            checked += 1
    assert checked >= 3


def test_latex_compiles_with_booktabs(tmp_path):
    if shutil.which("pdflatex") is None:
        pytest.fail("pdflatex is missing: scripts/test.sh installs texlive-latex-base and "
                    "texlive-latex-recommended (booktabs) with apt")
    body = "\n".join(export.table_latex(rows, caption=caption, label=f"{view}-{table}")
                     for view, table, rows, caption in TABLES)
    doc = tmp_path / "tables.tex"
    doc.write_text("\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n"
                   "\\usepackage[margin=1.5cm]{geometry}\n\\begin{document}\n" + body + "\n\\end{document}\n",
                   encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", doc.name], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout[-3000:]
    assert (tmp_path / "tables.pdf").stat().st_size > 1000
    assert "Missing character" not in (tmp_path / "tables.log").read_text(errors="replace")


def test_latex_text_escapes_and_spells_every_character():
    assert export.latex_text("a_b & 50% {x} ε ≤ 1e-05 §V") == (
        r"a\_b \& 50\% \{x\} $\varepsilon$ $\le$ 1e-05 \S{}V")
    assert export.latex_text("Σδ_i, λ, Ω, Α, ο") == r"$\Sigma$$\delta$\_i, $\lambda$, $\Omega$, A, o"
    assert export.latex_text("中") == r"\texttt{U+4E2D}"  # shown, never a compile error


@pytest.mark.parametrize("suffix,write", [(".tex", "latex"), (".md", "markdown")])
def test_cli_writes_the_same_table(tmp_path, capsys, suffix, write):
    out = tmp_path / f"table{suffix}"
    assert main(["figure", "curves", "--k", "12", "--out", str(out), "--table", "at_k"]) == 0
    capsys.readouterr()
    spec = registry()["curves"]
    values = {**spec.defaults(), "k": 12}
    rows = spec.build(**values).tables["at_k"]
    caption = export.table_caption(spec.title, "at_k", values)
    want = (export.table_latex(rows, caption=caption, label="dpviz-curves-at_k") if write == "latex"
            else export.table_markdown(rows, caption=caption))
    assert out.read_text(encoding="utf-8") == want
    assert "eps0 = 0.1" in want and "k = 12" in want


def test_cite_box_bibtex_covers_each_views_sources():
    documented = (ROOT / "docs" / "REFERENCES.md").read_text(encoding="utf-8")
    for view in registry():
        text = references.bibtex(view)
        keys = re.findall(r"^@\w+\{(\w+),", text, flags=re.M)
        assert keys == list(references.VIEW_SOURCES[view])
        assert text.count("{") == text.count("}")
        for key in keys:
            assert f"| {key} |" in documented, key
            assert re.search(r"^\s+year\s+= \{\d{4}\}", references.BIBTEX[key], flags=re.M)
