"""The expected privacy loss of one ε0-DP step (its KL divergence): why advanced composition grows like √k.

- Roth lecture 4 Lemma 7: D∞(Y‖Z), D∞(Z‖Y) ≤ ε ⇒ D(Y‖Z) ≤ ε(e^ε − 1), the drift of DRV (Roth Thm 6).
- The largest KL over all ε-DP pairs is that of randomized response, ε tanh(ε/2) = ε(e^ε − 1)/(e^ε + 1):
  every ε-DP pair is a post-processing of it (KOV eq. 16 with δ0 = 0) and KL obeys the data processing
  inequality. KOV Thm 3.4's drift is this exact value; zCDP's ε²/2 (Steinke Prop. 16) lies between.
docs/MATH.md §19.
"""

from __future__ import annotations

import math


def lemma7(eps0: float) -> float:
    """Roth Lemma 7's bound ε0(e^{ε0} − 1) on D(Y‖Z) for an ε0-DP pair (Y, Z)."""
    return eps0 * math.expm1(eps0)


def worst_kl(eps0: float) -> float:
    """The largest D(Y‖Z) over ε0-DP pairs: randomized response's ε0 tanh(ε0/2) (docs/MATH.md §19)."""
    return eps0 * math.tanh(eps0 / 2.0)


def zcdp_kl(eps0: float) -> float:
    """ε0²/2: the bound on D(Y‖Z) = D_1 that ε0-DP ⇒ ε0²/2-zCDP (Steinke Prop. 16) gives."""
    return 0.5 * eps0 * eps0
