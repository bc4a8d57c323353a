"""Mechanisms as exact privacy loss laws (one module each) and Poisson subsampling.

``gaussian``, ``laplace``, ``geometric``, ``randomized_response``, ``canonical`` and ``finite``
each expose ``loss_law(**params) -> LossLaw``; ``subsampling`` amplifies (Steinke Thm 29) and
transforms laws; ``spec`` ties a named mechanism to every accounting route; ``heterogeneous``
composes lists of (ε_i, δ_i) levels.
"""
