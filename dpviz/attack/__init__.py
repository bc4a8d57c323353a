"""The attack lab (issue 13): the adversary's membership test run and drawn on the privacy region.

KOV §2 and Steinke §3.2 (seed 001, the Neyman–Pearson lemma): the best test of "the target is in"
against "it is not" thresholds the privacy loss. dpviz samples that statistic (``sampling``), tests
at every threshold with Clopper–Pearson boxes and certifies an empirical ε lower bound (``curve``),
and compares it with the proven ε and the exact trade-off curve (``theory``). docs/MATH.md §14.
"""

from dpviz.attack.run import AttackResult, run_attack
from dpviz.attack.setting import KINDS, MAX_STEP_DRAWS, MAX_TRIALS, PARAMS, PRIORS, Attack, make_attack

__all__ = ["KINDS", "MAX_STEP_DRAWS", "MAX_TRIALS", "PARAMS", "PRIORS", "Attack", "AttackResult",
           "make_attack", "run_attack"]
