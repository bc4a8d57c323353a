"""The registry of mechanisms: key (CLI subcommand, URL value) → class (``dpviz.mechanisms.base``).

Adding a mechanism is one module implementing ``Mechanism`` plus one line here; the CLI
subcommands, the accounting routes and the page widgets read this mapping.
"""

from __future__ import annotations

from typing import Any

from dpviz.mechanisms.base import Mechanism
from dpviz.mechanisms.canonical import Canonical
from dpviz.mechanisms.discrete_gaussian import DiscreteGaussian
from dpviz.mechanisms.finite import FinitePair
from dpviz.mechanisms.gaussian import Gaussian
from dpviz.mechanisms.geometric import Geometric
from dpviz.mechanisms.laplace import Laplace
from dpviz.mechanisms.randomized_response import RandomizedResponse
from dpviz.mechanisms.subsampling import NEIGHBOURING, Subsampled, wrap
from dpviz.validation import ParameterError

MECHANISMS: dict[str, type[Mechanism]] = {
    cls.key: cls
    for cls in (Gaussian, Laplace, Geometric, RandomizedResponse, Canonical, FinitePair, DiscreteGaussian)
}

KINDS = tuple(MECHANISMS)
"""The registered keys, in menu order."""


def mechanism_class(key: str) -> type[Mechanism]:
    try:
        return MECHANISMS[key]
    except KeyError:
        raise ParameterError("mechanism", key, "one of " + ", ".join(MECHANISMS)) from None


def make(key: str, *, sampling_rate: float | None = None, neighbouring: str = "add-remove",
         **params: Any) -> Mechanism | Subsampled:
    """The mechanism ``key`` with ``params`` (validated), Poisson-subsampled when a rate is given."""
    return wrap(mechanism_class(key)(**params), rate=sampling_rate, neighbouring=neighbouring)


__all__ = ["KINDS", "MECHANISMS", "NEIGHBOURING", "Mechanism", "Subsampled", "make", "mechanism_class"]
