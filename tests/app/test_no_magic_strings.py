"""No bare string in a page script but its docstrings: Streamlit's *magic* writes any expression
standing on its own line onto the page, so a string meant as an attribute's docstring (as in the
``dpviz`` modules) appears as text in the middle of the page (the attack lab showed "The two
fragments' keys: …" above its inputs). Docstrings — the first statement of the module, of a function
or of a class — are left alone by magic and are allowed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted([ROOT / "app.py", *(ROOT / "pages").glob("*.py")])


def _stray_strings(tree: ast.AST) -> list[int]:
    """Line numbers of bare string expressions that are not the first statement of their body."""
    lines: list[int] = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i, stmt in enumerate(body):
            docstring_slot = i == 0 and isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef
                                                   | ast.ClassDef)
            if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                    and isinstance(stmt.value.value, str) and not docstring_slot):
                lines.append(stmt.lineno)
    return lines


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_no_page_script_has_a_bare_string_but_its_docstrings(script: Path) -> None:
    assert _stray_strings(ast.parse(script.read_text(encoding="utf-8"))) == []


def test_the_check_finds_an_attribute_docstring() -> None:
    """The pattern that reached the page is found (the check can fail)."""
    source = '"""Module."""\nLAB = "a"\n"""The key."""\n\ndef f():\n    """Doc."""\n    "shown"\n'
    assert _stray_strings(ast.parse(source)) == [3, 7]
