"""The generalized composition experiment (HBW, seed 000): database priors and constraints.

- :mod:`~dpviz.gce.hypotheses`: priors over membership vectors b ∈ {0,1}^k.
- :mod:`~dpviz.gce.exact`: exact worst-case curve of two priors (canonical pair, count classes).
- :mod:`~dpviz.gce.paper_bounds`: HBW Eq. 3-4, Cor. 6-7, Thm 3 (with direction labels).
- :mod:`~dpviz.gce.constraints`: membership caps, allowed sets, parallel composition (HBW §V-A).
- :mod:`~dpviz.gce.refinement`: tuple refinement (HBW Alg. 3) for composite hypotheses.
- :mod:`~dpviz.gce.summary`: every applicable bound for one question, side by side.

Every bound is a :class:`~dpviz.guarantee.Guarantee` whose ``directions`` say which
inequalities of HBW Def. 3 it is proved for (``dpviz.guarantee.DIRECTION_TEXT``).
"""

from dpviz.guarantee import DIRECTION_TEXT, Direction

__all__ = ["DIRECTION_TEXT", "Direction"]
