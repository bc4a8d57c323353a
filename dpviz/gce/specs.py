"""Parameter specs of the "Database priors" page (label, URL key, default, check)."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from dpviz import params
from dpviz.params import Param
from dpviz.validation import check_count

EPS0 = params.EPS0
DELTA0 = replace(params.DELTA0, default=0.0,
                 help="δ0 of every mechanism, in [0, 1). With δ0 > 0 the exact method needs k ≲ 2800 "
                      "(0⃗ against a prior) or k ≲ 290 (two composite priors).")
DELTA = params.CURVES_DELTA  # target total δ, default 1e-5
K = Param("k", "k (databases, one mechanism each)", 1000, partial(check_count, field="k", maximum=100_000),
          "Number of databases, 1 to 100,000.")
CAP = Param("cap", "at most C databases per person", 365, partial(check_count, field="C", maximum=100_000),
            "C ≥ 1 and at most k.")
K2 = Param("k2", "k' (in at least k' databases)", 3, partial(check_count, field="k'", maximum=100_000),
           "1 ≤ k' ≤ k.")
COMMON = Param("common", "common feature columns", 4, partial(check_count, field="common columns", minimum=0,
                                                                 maximum=10_000))
FREE_ONLY = Param("free_only", "ad columns (free users)", 3,
                  partial(check_count, field="ad columns", minimum=0, maximum=10_000))
PAID_ONLY = Param("paid_only", "premium columns (paid users)", 5,
                  partial(check_count, field="premium columns", minimum=0, maximum=10_000))

KIND_LABELS = {"cap": "at most C databases per person", "features": "free vs paid feature columns",
               "uniform-nonzero": "in at least one database (uniform prior)",
               "at-least": "in at least k' databases"}


def with_default(p: Param, default: object) -> Param:
    return replace(p, default=default)
