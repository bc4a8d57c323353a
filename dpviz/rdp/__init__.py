"""Rényi-DP route: Poisson-subsampled RDP (Steinke Thm 34) and conversion to (ε, δ)."""

from dpviz.rdp.conversion import epsilon_from_rdp
from dpviz.rdp.subsampled import DEFAULT_ORDERS, gaussian_rdp, laplace_rdp, law_rdp, subsampled_rdp

__all__ = ["DEFAULT_ORDERS", "epsilon_from_rdp", "gaussian_rdp", "laplace_rdp", "law_rdp", "subsampled_rdp"]
