"""Parameter specs shared by several pages (one spec: label, default, check, URL key)."""

from __future__ import annotations

from functools import partial

from dpviz.composition.levels import parse_levels
from dpviz.ui import Param
from dpviz.validation import check_count, check_delta, check_epsilon

EPS0 = Param("eps0", "ε0 (each mechanism)", 0.1, partial(check_epsilon, field="ε0"),
             "Privacy parameter ε0 of every composed mechanism, in [0, 100].")
DELTA0 = Param("delta0", "δ0 (each mechanism)", 0.001, partial(check_delta, field="δ0"),
               "Privacy parameter δ0 of every composed mechanism, in [0, 1); e.g. 1e-6.")
DELTA = Param("delta", "target total δ", 0.05, partial(check_delta, field="target δ", positive=False),
              "The total δ allowed after composition, in [0, 1).")
K = Param("k", "k (mechanisms composed)", 30, partial(check_count, field="k", maximum=1_000_000),
          "Number of composed mechanisms, 1 to 1,000,000.")
K_MAX = Param("k_max", "largest k plotted", 1000, partial(check_count, field="largest k", maximum=1_000_000),
              "Right end of the ε-against-k plot, 1 to 1,000,000.")
HETERO_LEVELS = Param("levels", "mechanisms (ε:δ:count, …)", "0.1:1e-6:30,0.5:0:10", parse_levels,
                      "For example 0.1:1e-6:30,0.5:0:10 — 30 mechanisms that are (0.1, 1e-6)-DP "
                      "and 10 that are 0.5-DP.")
HETERO_DELTA = Param("hdelta", "target total δ (heterogeneous)", 1e-4,
                     partial(check_delta, field="target δ (heterogeneous)"))

# The curves view opens on pure ε0-DP at δ = 1e-5, where all four methods give a value
# for every k up to 1000 (with δ0 > 0, basic composition stops once kδ0 exceeds δ).
CURVES_DELTA0 = Param("delta0", "δ0 (each mechanism)", 0.0, DELTA0.check, DELTA0.help)
CURVES_DELTA = Param("delta", "target total δ", 1e-5, DELTA.check, DELTA.help)
