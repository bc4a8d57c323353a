"""What a server imports at start is frozen out of the garbage collector's generations
(``dpviz.ui``, issue 20): a full collection then walks only what pages made since."""

from __future__ import annotations

import gc
import subprocess
import sys


def test_importing_dpviz_ui_freezes_the_imported_objects():
    # a fresh interpreter: the test process's own freeze count says nothing about dpviz.ui
    code = "import gc, dpviz.ui; print(gc.get_freeze_count(), sum(gc.get_count()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    frozen, tracked = (int(x) for x in out.split()[-2:])
    assert frozen > 100_000  # numpy, scipy, pandas, plotly and Streamlit's objects
    assert tracked < frozen / 10
    assert gc.isenabled()  # frozen, not switched off: cycles made by pages are still collected


def test_a_server_start_loads_every_group_of_compiled_loops():
    """``dpviz.ui``'s import (a server's start) loads the priors' class-table loops, the loss atoms'
    loops, the PLD scans, the region walks and the threshold priors' walks compiled
    (``dpviz.jit.compile_all``): no student's first click pays Numba's load or compile."""
    code = ("import dpviz.ui, dpviz.jit as j\n"
            "print('|'.join(sorted(g.what for g in j._GROUPS if g._compiled is not None and not g._failed)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == ("the class-table loops|the loss atoms' sums and searches|"
                                             "the lower grid's scans|the region walks|the threshold walks")
