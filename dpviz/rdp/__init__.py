"""Rényi-DP route: Poisson-subsampled RDP (Steinke Thm 34) and conversion to (ε, δ)."""

from dpviz.rdp.conversion import epsilon_from_rdp
from dpviz.rdp.subsampled import DEFAULT_ORDERS, base_rdp, subsampled_rdp

__all__ = ["DEFAULT_ORDERS", "base_rdp", "epsilon_from_rdp", "subsampled_rdp"]
