"""The declared layering, read from the source with ``ast`` (nothing is imported).

math (numpy/scipy) → ``dpviz/figures`` (plotly) → ``dpviz/views`` → ``pages/`` and ``app.py``
(Streamlit, through ``dpviz/ui.py``); ``dpviz/cli`` sits beside the pages. Every import counts,
also one inside a function: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

MATH = ("dpviz.composition", "dpviz.gce", "dpviz.pld", "dpviz.rdp", "dpviz.mechanisms", "dpviz.regions",
        "dpviz.buckets", "dpviz.planner", "dpviz.numerics", "dpviz.validation", "dpviz.guarantee",
        "dpviz.budget", "dpviz.attack", "dpviz.results")
"""The math packages and modules: numpy and scipy (and ``dpviz.params`` for their parameter specs)."""
SPECS = ("dpviz.params", "dpviz.export")
"""Plain helpers shared by every layer: parameter specs (``Param``: key, label, default, check;
a mechanism declares its parameters with them) and the export formats. They import math only."""
UPPER = ("dpviz.figures", "dpviz.views", "dpviz.cli", "dpviz.ui")
STREAMLIT_ALLOWED = ("dpviz.ui", "pages", "app")
PAGE_IMPORTS = ("dpviz.ui", "dpviz.views", "dpviz.params", "dpviz.validation")
"""What a page (and the home page) may import from dpviz: it never computes a bound or draws a figure
itself; it reads inputs, calls a view and shows the result."""
PLOTTING = ("plotly", "kaleido", "matplotlib")

RULES: tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...] = (
    (MATH, PLOTTING + UPPER + ("dpviz.export",),
     "math imports no plotting, figures, views, CLI, UI or export"),
    (SPECS, PLOTTING + UPPER, "specs import no plotting, figures, views, CLI or UI"),
    (("dpviz.figures",), ("dpviz.views", "dpviz.cli", "dpviz.ui"),
     "figures import no views, CLI or UI"),
    (("dpviz.views",), ("dpviz.cli", "dpviz.ui"), "views import no CLI or UI"),
    (("dpviz.cli",), ("dpviz.ui",), "the CLI imports no UI"),
    (("dpviz.ui",), ("dpviz.cli",), "the UI imports no CLI"),
)


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources(root: Path) -> Iterator[Path]:
    yield from sorted((root / "dpviz").rglob("*.py"))
    yield from sorted((root / "pages").glob("*.py"))
    if (root / "app.py").exists():
        yield root / "app.py"


def imports(root: Path, path: Path) -> Iterator[tuple[str, int]]:
    """(imported module, line) for every import in ``path``; ``from a import b`` gives ``a.b``
    when ``b`` is a module of the tree, else ``a``; relative imports are resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_name(root, path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                is_module = (root / Path(*sub.split("."))).with_suffix(".py").exists() or \
                    (root / Path(*sub.split("."))).is_dir()
                yield (sub if is_module else base), node.lineno


def is_new_package(name: str) -> bool:
    """A dpviz subpackage or module no layer names (added later, e.g. a planner): held to the math
    rules until it is listed elsewhere."""
    u = unit(name)
    return u is not None and not _within(u, MATH + SPECS + UPPER + ("dpviz.__main__",))


def violations(root: Path) -> list[str]:
    """Every import that crosses a boundary, as ``file:line imports module: rule``.

    Checked by hand against the tree before the mechanisms view moved (``git archive b362273~1``):
    ``dpviz/mechanisms/view.py`` imports figures and views, and the units mechanisms ↔ views form
    a cycle, as ``test_checker_finds_a_cycle`` rebuilds in small."""
    out = []
    for path in sources(root):
        me = module_name(root, path)
        for target, line in imports(root, path):
            where = f"{path.relative_to(root)}:{line} imports {target}"
            if _within(target, ("streamlit",)) and not _within(me, STREAMLIT_ALLOWED):
                out.append(f"{where}: only dpviz/ui (the package), pages/ and app.py import Streamlit")
            if _within(me, ("pages", "app")) and ((_within(target, ("dpviz",)) and target != "dpviz"
                                                   and not _within(target, PAGE_IMPORTS))
                                                  or _within(target, PLOTTING)):
                out.append(f"{where}: a page imports only dpviz's ui, views, params and validation")
            for sources_, forbidden, why in RULES:
                mine = _within(me, sources_) or (sources_ is MATH and is_new_package(me))
                if mine and _within(target, forbidden) and not _within(target, sources_):
                    out.append(f"{where}: {why}")
    return sorted(set(out))  # ``from a import b, c``: one line per import statement


def unit(name: str) -> str | None:
    """The dpviz subpackage or top-level module a module belongs to (``dpviz.gce.exact`` → ``dpviz.gce``)."""
    parts = name.split(".")
    if parts[0] != "dpviz" or len(parts) < 2:
        return None
    return ".".join(parts[:2])


def unit_graph(root: Path) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in (root / "dpviz").rglob("*.py"):
        me = unit(module_name(root, path))
        if me is None:
            continue
        graph.setdefault(me, set())
        for target, _ in imports(root, path):
            other = unit(target)
            if other is not None and other != me:
                graph[me].add(other)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_layer_boundaries() -> None:
    assert violations(ROOT) == []


def test_no_import_cycles_between_subpackages() -> None:
    assert cycles(unit_graph(ROOT)) == []


# --- The checker can fail: a small tree with each kind of fault --------------------------

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("files", "expected"), [
    ({"dpviz/gce/a.py": "import plotly.graph_objects as go\n"}, "math imports no plotting"),
    ({"dpviz/pld/a.py": "def f():\n    from dpviz.figures import style\n"}, "math imports no plotting"),
    ({"dpviz/figures/a.py": "from dpviz.views import curves\n"}, "figures import no views"),
    ({"dpviz/views/a.py": "from dpviz import ui\n"}, "views import no CLI or UI"),
    ({"dpviz/views/a.py": "import streamlit as st\n"}, "only dpviz/ui"),
    ({"dpviz/ui/a.py": "def f():\n    from dpviz.cli.figure import render\n"}, "the UI imports no CLI"),
    ({"dpviz/regions/a.py": "from ..figures import style\n"}, "math imports no plotting"),
    ({"dpviz/params.py": "import plotly\n"}, "specs import no plotting"),
    ({"dpviz/newmath/a.py": "from dpviz.views import curves\n"}, "math imports no plotting"),
    ({"pages/1_A.py": "from dpviz.composition import optimal\n"}, "a page imports only"),
    ({"app.py": "import plotly.graph_objects as go\n"}, "a page imports only"),
])
def test_checker_finds_each_fault(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    files = {"dpviz/__init__.py": "", "dpviz/figures/__init__.py": "", "dpviz/views/__init__.py": "",
             "dpviz/figures/style.py": "", "dpviz/views/curves.py": "", "dpviz/ui.py": "", **files}
    found = violations(_tree(tmp_path, files))
    assert len(found) == 1 and expected in found[0], found


def test_checker_finds_a_cycle(tmp_path: Path) -> None:
    """The shape of the mechanisms-view cycle before it moved: math → views → math."""
    root = _tree(tmp_path, {
        "dpviz/__init__.py": "", "dpviz/mechanisms/__init__.py": "", "dpviz/views/__init__.py": "",
        "dpviz/mechanisms/view.py": "from dpviz.views import View\n",
        "dpviz/views/registry.py": "def r():\n    from dpviz.mechanisms.view import SPEC\n"})
    assert cycles(unit_graph(root)) == [["dpviz.mechanisms", "dpviz.views"]]
    assert any("math imports no" in v for v in violations(root))


# --- Imports inside functions that hide a cycle ----------------------------------------------

def _module_level(tree: ast.Module) -> set[int]:
    """The ids of the import nodes at module level (also under ``if``/``try`` at top level)."""
    out: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        out.update(id(sub) for sub in ast.walk(node) if isinstance(sub, ast.Import | ast.ImportFrom))
    return out


def _dpviz_modules(root: Path) -> dict[str, Path]:
    return {module_name(root, p): p for p in sorted((root / "dpviz").rglob("*.py"))}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The dpviz module an imported name lives in (``a.b.c`` → the longest prefix that is a module)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in modules:
            return ".".join(parts[:i])
    return None


def hidden_cycles(root: Path) -> list[str]:
    """Every import inside a function of module A of a module B that imports A back at module level
    (directly or through other modules): the local import only hides the cycle."""
    modules = _dpviz_modules(root)
    top: dict[str, set[str]] = {m: set() for m in modules}
    local: list[tuple[str, str, int]] = []
    for me, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        level = _module_level(tree)
        lines = {node.lineno: id(node) in level for node in ast.walk(tree)
                 if isinstance(node, ast.Import | ast.ImportFrom)}
        for target, line in imports(root, path):
            other = _resolve(target, modules)
            if other is None or other == me:
                continue
            (top[me].add(other) if lines.get(line, True) else local.append((me, other, line)))
    # a package's module-level imports include its __init__'s
    out = []
    for me, other, line in local:
        seen, todo = set(), [other]
        while todo:
            m = todo.pop()
            if m in seen:
                continue
            seen.add(m)
            todo.extend(top.get(m, ()))
            parent = m.rpartition(".")[0]
            if parent in top:
                todo.append(parent)
        if me in seen:
            out.append(f"{modules[me].relative_to(root)}:{line} imports {other} inside a function: "
                       f"{other} imports {me} back at module level")
    return sorted(out)


def test_no_function_local_import_hides_a_cycle() -> None:
    assert hidden_cycles(ROOT) == []


def test_the_cli_answers_from_the_core() -> None:
    """Only ``figure``, which exports a page's view, imports views: every other command calls the core."""
    out = []
    for path in sorted((ROOT / "dpviz" / "cli").glob("*.py")):
        if path.name == "figure.py":
            continue
        out += [f"{path.name}:{line} imports {target}" for target, line in imports(ROOT, path)
                if _within(target, ("dpviz.views",))]
    assert out == []


def test_checker_finds_a_hidden_cycle(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"dpviz/__init__.py": "", "dpviz/a.py": "def f():\n    from dpviz import b\n",
                            "dpviz/b.py": "from dpviz import a\n"})
    assert hidden_cycles(root) == ["dpviz/a.py:2 imports dpviz.b inside a function: dpviz.b imports "
                                   "dpviz.a back at module level"]


MAX_MODULE_LINES = 450
"""Small modules with one concept each (the developers' brief): none over about 450 lines."""


def long_modules(root: Path, limit: int = MAX_MODULE_LINES) -> list[str]:
    """Every module of dpviz, pages/ and app.py over ``limit`` lines, as ``path: n lines``."""
    out = []
    for path in sources(root):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > limit:
            out.append(f"{path.relative_to(root)}: {n} lines")
    return out


def test_no_module_over_the_line_limit() -> None:
    assert long_modules(ROOT) == []


def test_checker_finds_a_long_module(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"dpviz/__init__.py": "", "dpviz/a.py": "x = 1\n" * (MAX_MODULE_LINES + 1),
                            "dpviz/b.py": "x = 1\n" * MAX_MODULE_LINES})
    assert long_modules(root) == [f"dpviz/a.py: {MAX_MODULE_LINES + 1} lines"]
