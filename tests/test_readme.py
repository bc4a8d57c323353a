"""The README's command-line examples run, and every number the README quotes for them is what they print.

Each ``python -m dpviz …`` line of a ```bash block is run (from a temporary directory, so figure
files land there). The ``#   → …`` comment under a command quotes its answer:

- ``path = number``: the JSON value at ``path`` (dots between keys; ``ε``/``δ`` stand for
  ``epsilon``/``delta``, so ``optimal.ε`` is ``["optimal"]["epsilon"]`` and ``ε_lower`` is
  ``["epsilon_lower"]``) must round to the quoted number at the digits quoted;
- ``"text"``: the text must appear in what the command prints (stdout or stderr);
- ``exit N``: the exit status (0 otherwise).

Prose right after a block may quote ``ε = number`` again; each must be one of the numbers the
block's ``→`` lines quote (and so is checked through them). A failure names the README line, the
quoted number and what the command printed, so the README can be updated from the message.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PREFIX = "python -m dpviz "
NUMBER = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
QUOTED_VALUE = re.compile(rf"(?P<path>[^\W\d][\w.]*)\s*=\s*(?P<num>{NUMBER})(?![\w.])")
PROSE_EPSILON = re.compile(rf"ε = (?P<num>{NUMBER})(?![\w.])")
MAX_BUDGET = 60.0  # examples that ask for more seconds of work than the default are not run here


@dataclass(frozen=True)
class Example:
    """One command of the README, its line number, its ``→`` comment and its code block."""

    line: int
    command: str
    quote: str
    block: int

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.command[len(PREFIX):])

    @property
    def id(self) -> str:
        return f"line{self.line}-{'-'.join(self.argv[:2])}"


def _blocks() -> list[tuple[int, list[str], list[str]]]:
    """(first line number, lines of the ```bash block, lines of the paragraph after it)."""
    lines = README.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```bash":
            start = i + 1
            end = next(j for j in range(start, len(lines)) if lines[j].strip() == "```")
            after = end + 1
            while after < len(lines) and not lines[after].strip():
                after += 1
            para_end = after
            while (para_end < len(lines) and lines[para_end].strip()
                   and not lines[para_end].startswith(("#", "```"))):
                para_end += 1
            out.append((start + 1, lines[start:end], lines[after:para_end]))
            i = end + 1
        else:
            i += 1
    return out


def _examples() -> list[Example]:
    found: list[Example] = []
    for b, (first, block, _) in enumerate(_blocks()):
        for offset, raw in enumerate(block):
            text = raw.strip()
            if text.startswith(PREFIX):
                found.append(Example(first + offset, text.split("  #")[0].strip(), "", b))
            elif text.startswith("#") and "→" in text and found and found[-1].block == b:
                last = found[-1]
                found[-1] = Example(last.line, last.command, (last.quote + " " + text).strip(), b)
    return found


EXAMPLES = _examples()


def _budget(ex: Example) -> float | None:
    argv = ex.argv
    return float(argv[argv.index("--budget") + 1]) if "--budget" in argv else None


def _lookup(payload: Any, path: str) -> Any:
    node = payload
    for part in path.split("."):
        key = part.replace("ε", "epsilon").replace("δ", "delta")
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node


def _rounds_to(value: float, quoted: str) -> bool:
    """``value`` rounds to ``quoted`` at the quoted digits (half a unit of its last place)."""
    q = Decimal(quoted)
    half_unit = Decimal(5).scaleb(int(q.as_tuple().exponent) - 1)
    return abs(Decimal(repr(float(value))) - q) <= half_unit


def _run(command: str, workdir: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run([sys.executable, "-m", "dpviz", *shlex.split(command[len(PREFIX):])], cwd=workdir,
                          env=env, capture_output=True, text=True, timeout=600, check=False)


def test_readme_has_the_examples_this_test_reads() -> None:
    """Guards the parser: if the README's format drifts, this fails instead of checking nothing."""
    assert len(EXAMPLES) >= 8
    assert {ex.argv[0] for ex in EXAMPLES} >= {"compose", "gce", "mechanism", "figure"}
    assert sum(len(QUOTED_VALUE.findall(ex.quote)) for ex in EXAMPLES) >= 15


def test_every_answering_example_quotes_its_answer() -> None:
    """Each example that answers with numbers (not a figure file, not a long run) quotes one."""
    silent = [f"README line {ex.line}: {ex.command}" for ex in EXAMPLES
              if ex.argv[0] != "figure" and not (_budget(ex) or 0) > MAX_BUDGET and not ex.quote]
    assert silent == [], "add a '#   → path = value' line under:\n" + "\n".join(silent)


@pytest.mark.parametrize("ex", EXAMPLES, ids=[ex.id for ex in EXAMPLES])
def test_example_runs_and_prints_the_quoted_numbers(ex: Example, tmp_path: Path) -> None:
    budget = _budget(ex)
    if budget is not None and budget > MAX_BUDGET:
        pytest.skip(f"README line {ex.line} asks for {budget:g} s of work; its answer without the "
                    "budget is quoted on the line above it")
    done = _run(ex.command, str(tmp_path))
    where = f"README line {ex.line}: {ex.command}"
    want_exit = int(m.group(1)) if (m := re.search(r"\bexit (\d+)", ex.quote)) else 0
    assert done.returncode == want_exit, f"{where}\nexit {done.returncode}, stderr: {done.stderr.strip()}"
    assert "Traceback" not in done.stderr, f"{where}\n{done.stderr}"
    problems = [f'"{text}" is not in what it prints: {(done.stdout + done.stderr).strip()[:300]}'
                for text in re.findall(r'"([^"]+)"', ex.quote) if text not in done.stdout + done.stderr]
    values = list(QUOTED_VALUE.finditer(re.sub(r'"[^"]*"', "", ex.quote)))
    if values:
        payload = json.loads(done.stdout)
        for m in values:
            path, quoted = m.group("path"), m.group("num")
            try:
                got = _lookup(payload, path)
            except (KeyError, IndexError, ValueError, TypeError):
                problems.append(f"{path} = {quoted} is quoted, but the output has no {path}")
                continue
            if not isinstance(got, (int, float)) or isinstance(got, bool) or not _rounds_to(got, quoted):
                problems.append(f"{path} = {quoted} is quoted, but it prints {path} = {got!r}")
    if "--out" in ex.argv:
        out = tmp_path / ex.argv[ex.argv.index("--out") + 1]
        if not (out.is_file() and out.stat().st_size > 0):
            problems.append(f"no file {out.name} written")
    assert problems == [], where + "\n" + "\n".join(problems)


@pytest.mark.parametrize("block", sorted({ex.block for ex in EXAMPLES}))
def test_prose_after_a_block_quotes_only_checked_numbers(block: int) -> None:
    first, _, paragraph = _blocks()[block]
    arrows = [m.group("num") for ex in EXAMPLES if ex.block == block for m in QUOTED_VALUE.finditer(ex.quote)
              if m.group("path").endswith("ε")]
    unchecked = [m.group("num") for m in PROSE_EPSILON.finditer(" ".join(paragraph))
                 if not any(_rounds_to(float(a), m.group("num")) for a in arrows)]
    assert unchecked == [], (f"README: the paragraph after the block at line {first} quotes ε = "
                             f"{', '.join(unchecked)}, which no '→' line of that block quotes")


def _sources() -> list[Path]:
    """The repository's Python and Markdown files (not docs/ itself, which cites within docs/)."""
    found = [p for pattern in ("*.py", "*.md") for p in ROOT.rglob(pattern)]
    skip = {".git", "test-artifacts", "docs", "build", ".venv"}
    return [p for p in found if not skip & set(p.relative_to(ROOT).parts)]


def test_math_md_citations_name_existing_sections() -> None:
    """Code cites 'docs/MATH.md §N'; every such N is a heading of docs/MATH.md."""
    headings = set(re.findall(r"^#+ §(\d+(?:\.\d+)?) ", (ROOT / "docs" / "MATH.md").read_text(), re.M))
    bad = [f"{p.relative_to(ROOT)}: §{n}" for p in _sources()
           for n in re.findall(r"MATH\.md §(\d+(?:\.\d+)?)", p.read_text(encoding="utf-8", errors="replace"))
           if n not in headings]
    assert bad == [], "cited sections missing from docs/MATH.md:\n" + "\n".join(bad)


def test_nothing_cites_files_outside_the_repository() -> None:
    """The math notes and papers are cited inside the repository (docs/MATH.md, docs/REFERENCES.md)."""
    outside = re.compile(r"/work/|shared/seeds|seeds/0\d\d_|(?<!docs/)(?<![\w/])MATH\.md")
    bad = [f"{p.relative_to(ROOT)}:{i}: {line.strip()[:100]}" for p in _sources()
           for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
           if outside.search(line) and p.name != "test_readme.py"]
    assert bad == [], "cite docs/MATH.md or docs/REFERENCES.md instead:\n" + "\n".join(bad)
