"""Mechanisms as exact privacy loss laws, one module each, and the accounting routes over them.

Each mechanism module (``gaussian``, ``laplace``, ``geometric``, ``randomized_response``,
``canonical``, ``finite``, ``discrete_gaussian``) keeps its ``loss_law(**params) -> LossLaw`` and
one class implementing the protocol of ``base`` (its ``Param`` specs, loss law, RDP, per-step
guarantee, closed form, grid unit, largest loss, replace-one law); ``registry`` maps the CLI/URL
key to the class. ``subsampling`` wraps any of them in Poisson subsampling (add/remove, Steinke
Thm 29/34; replace-one, §6.2); ``routes`` answers ε at δ or δ at ε by every route as a
``Guarantee`` and picks the best; ``heterogeneous`` composes lists of (ε_i, δ_i) levels.
"""
