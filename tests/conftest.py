"""Hypothesis profiles for the whole suite (issue 19 item 8).

``ci`` (chosen when the environment says ``CI=true``, as CI services set it): derandomised, so every
CI run draws the same examples and a red build is reproducible; no per-example deadline (a shared
2-core machine makes every timing a coin toss: no test asserts time). ``dev`` (default): random
examples, also without deadline. The long random fuzz of the command line stays a script
(``scripts/fuzz_cli.py``). ``HYPOTHESIS_PROFILE=…`` picks one explicitly.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
_ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if _ci else "dev"))
