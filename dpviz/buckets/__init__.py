"""Privacy buckets (Meiser & Mohammadi, seed 003): sound upper and lower bounds by histogram."""

from dpviz.buckets.buckets import (
    MAX_BUCKETS,
    MAX_LOG_F,
    Buckets,
    check_buckets,
    epsilon_from_delta_curve,
)

__all__ = ["MAX_BUCKETS", "MAX_LOG_F", "Buckets", "check_buckets", "epsilon_from_delta_curve"]
