"""Hypothesis profiles for the whole suite (issue 19 item 8).

``ci`` (chosen when the environment says ``CI=true``, as CI services set it): derandomised, so every
CI run draws the same examples and a red build is reproducible; no per-example deadline (a shared
2-core machine makes every timing a coin toss: no test asserts time). ``dev`` (default): random
examples, also without deadline. The long random fuzz of the command line stays a script
(``scripts/fuzz_cli.py``). ``HYPOTHESIS_PROFILE=…`` picks one explicitly.
"""

from __future__ import annotations

import functools
import os
import sys

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
_ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if _ci else "dev"))



def _scan_component_manifests_once() -> None:
    """Every ``AppTest`` scans all ~160 installed distributions for Streamlit v2 component manifests
    before its first run (``BidiComponentManager.discover_and_register_components``): 0.5–2.5 s per
    page test on a 2-core machine, most of the suite's AppTest time. The installed packages cannot
    change during a test session, so each test process scans once and reuses the answer (dpviz
    registers no components; the real server also scans once, at start-up)."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # a Streamlit without v2 components: nothing is scanned
        return
    manifests = functools.cache(manifest_scanner.scan_component_manifests)
    manifest_scanner.scan_component_manifests = lambda max_workers=None: list(manifests())


_scan_component_manifests_once()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Streamlit's ``AppTest`` module keeps a ``TemporaryDirectory`` for the life of the process and
    leaves it to the interpreter's exit, which reports it as a ResourceWarning: under a warning
    filter left at "error" that printed a traceback after the last test of a worker. Removing it
    here, once no test runs, is the explicit cleanup the warning asks for."""
    app_test = sys.modules.get("streamlit.testing.v1.app_test")
    if app_test is not None:
        app_test.TMP_DIR.cleanup()

