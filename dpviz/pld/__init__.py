"""Privacy loss distributions: exact laws, sound grid discretisation, FFT composition.

- ``law``: the exact loss law of a pair (atoms + continuous part), δ(ε) by Steinke Prop. 7.
- ``discretize``: pessimistic (connect-the-dots) and optimistic grids; ``postprocess``: the optimistic
  one as a post-processing of the mechanism (data-processing inequality).
- ``grid``: ``GridPLD``, convolution (Steinke Thm 9), squaring, sound truncation.
- ``accountant``: certified intervals for ε(δ) and δ(ε) of heterogeneous compositions.
"""

from dpviz.pld.accountant import Composed, compose, delta_bounds, epsilon_bounds, plan
from dpviz.pld.grid import MAX_BINS, GridPLD
from dpviz.pld.law import ContinuousPart, LossLaw

__all__ = ["MAX_BINS", "Composed", "ContinuousPart", "GridPLD", "LossLaw", "compose", "delta_bounds",
           "epsilon_bounds", "plan"]
