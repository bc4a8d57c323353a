"""Declarative parameter specs: one spec gives the widget label, the URL key, the CLI
option, the default and the check (Streamlit-free, shared by pages and the CLI)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from dpviz.composition.levels import parse_levels
from dpviz.validation import check_count, check_delta, check_epsilon


@dataclass(frozen=True)
class Param:
    """A page parameter: ``key`` is the URL query key and the CLI option name."""

    key: str
    label: str
    default: Any
    check: Callable[[Any], Any]
    help: str = ""


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


def check_flag(value: object, *, field: str = "flag") -> bool:
    """true/false, 1/0, yes/no (URL and CLI spelling of a switch)."""
    from dpviz.validation import ParameterError

    text = str(value).strip().lower()
    if text in {"true", "1", "yes", "on"}:
        return True
    if text in {"false", "0", "no", "off"}:
        return False
    raise ParameterError(field, value, "true or false")


LOG_K = Param("log_k", "log k axis", True, partial(check_flag, field="log k axis"))

K_SLIDER = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100, 120, 150, 200, 250, 300,
            400, 500, 600, 800, 1000, 2000, 5000, 10_000)
"""The k values of the privacy-regions slider (KOV Fig. 2): roughly log-spaced."""
