"""Every module a page can reach, imported by the first thread that imports ``dpviz.ui``.

A server's first sessions run their pages in script threads of their own, so the first imports of
dpviz's modules (and of numpy, scipy, pandas and plotly below them) are made by several threads at
once. CPython's per-module import locks then can trip their deadlock detector and hand a thread a
partially initialised module (CPython issue 83065: a package and its submodule locked in opposite
orders, as scipy's lazily loaded subpackages are): the page shows an exception box, and a package
whose import failed stays broken in that server for every later session. A load run saw it once on
a fresh replica (``cannot import name 'PytestTester' from partially initialized module
'scipy._lib._testutils'``, then ``Module 'scipy' has no attribute '_lib'`` on every open of three
pages). Every page imports ``dpviz.ui`` before any dpviz module; importing them all here, while one
thread holds ``dpviz.ui``'s import lock and the others wait for it holding none, makes a server's
first imports one thread's work (about 1 s, once per server process).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from types import ModuleType

import dpviz

NOT_FOR_PAGES = ("dpviz.cli", "dpviz.__main__")
"""The command line's modules, which no page imports (nor may ``dpviz.ui``: tests/test_layers.py)."""
STREAMLIT_LAZY = ("pyarrow",)
"""What Streamlit imports on a page's first table (``st.dataframe``, ``st.data_editor``)."""


def _import_tree(package: ModuleType) -> Iterator[str]:
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        if info.name in NOT_FOR_PAGES:
            continue
        module = importlib.import_module(info.name)
        yield info.name
        if info.ispkg:
            yield from _import_tree(module)


def import_every_module() -> tuple[str, ...]:
    """Import every dpviz module but the command line's, and Streamlit's lazy imports; their names."""
    for name in STREAMLIT_LAZY:
        importlib.import_module(name)
    return (*STREAMLIT_LAZY, *_import_tree(dpviz))
