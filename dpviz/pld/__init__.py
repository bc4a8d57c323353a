"""Privacy loss distributions: exact laws, sound grid discretisation, FFT composition.

- ``law``: the exact loss law of a pair (atoms + continuous part), δ(ε) by Steinke Prop. 7.
- ``discretize``: pessimistic (connect-the-dots) and optimistic grids; ``postprocess``: the optimistic
  one as a post-processing of the mechanism (data-processing inequality).
- ``grid``: ``GridPLD``, a bound on a uniform grid read off exactly, sound truncation.
- ``power``: k-fold composition (Steinke Thm 9) by one forward and one inverse transform.
- ``cost``, ``composed``, ``refine``: the a-priori cost, the composed grids of every direction and
  bound, the choice of width and tilt for a target.
- ``accountant``: certified intervals for ε(δ) and δ(ε) of heterogeneous compositions.
"""

from dpviz.pld.accountant import Composed, compose, delta_bounds, epsilon_bounds, plan
from dpviz.pld.grid import MAX_BINS, GridPLD
from dpviz.pld.law import ContinuousPart, LossLaw

__all__ = ["MAX_BINS", "Composed", "ContinuousPart", "GridPLD", "LossLaw", "compose", "delta_bounds",
           "epsilon_bounds", "plan"]
