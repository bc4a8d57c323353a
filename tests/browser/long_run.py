"""A Streamlit script that runs for a minute unless it is stopped (``test_feedback.py``).

Served from the repository, so under the project's own ``.streamlit/config.toml``, and with the
pages' own menu item (``dpviz.ui.layout.ABOUT``): what the test checks is that this configuration (a
minimal toolbar, which a page without a menu item does not show at all) still shows Streamlit's
running indicator and its Stop button, and that Stop ends a run. The app itself no longer has a run
long enough to click Stop on reliably: most of its changes take well under a second of CPU
(benchmarks/results/server_cpu.md)."""

import sys
import time
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: dpviz, as app.py has it
from dpviz.ui.layout import ABOUT

st.set_page_config(page_title="A long run — dpviz", layout="wide", menu_items={"About": ABOUT})
st.title("A long run")
clock = st.empty()
for tenth in range(600):
    clock.text(f"running for {tenth / 10:.1f} s")  # Streamlit checks for Stop at each element sent
    time.sleep(0.1)
clock.text("ran to the end")
