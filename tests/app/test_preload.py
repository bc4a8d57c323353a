"""``import dpviz.ui`` (every page's first import of its own) imports every module that a page, the
entry script or the code they reach names in an import statement, at any depth: a server's first
imports are then one thread's work, never several script threads' at once (dpviz.ui.preload)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import ast, importlib, json, sys
from pathlib import Path
import dpviz.ui
loaded = set(sys.modules)
sources = [Path("app.py"), *Path("pages").glob("*.py"),
           *(p for p in Path("dpviz").rglob("*.py") if p.parts[1] not in ("cli", "__main__.py"))]
named = set()
for path in sources:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            named |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module != "__future__":
            named |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
for name in sorted(named):
    try:
        importlib.import_module(name)
    except ImportError:  # ``from module import name`` of a function or a class
        pass
print(json.dumps({"named": len(named), "new": sorted(set(sys.modules) - loaded)}))
"""


def test_importing_the_ui_leaves_no_first_import_to_a_page() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True,
                          check=True, timeout=300)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["named"] > 100  # the probe read the sources' imports
    assert found["new"] == []
