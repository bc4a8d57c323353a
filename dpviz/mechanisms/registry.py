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


def make_sampled(key: str, *, sampling_rate: float | None, neighbouring: str, batch: tuple[int, int] | None,
                 params: dict[str, Any]) -> Mechanism | Subsampled:
    """:func:`make`, or on a fixed-size batch of m of n records (``batch`` = (m, n), replace-one)."""
    return wrap(mechanism_class(key)(**params), rate=sampling_rate, neighbouring=neighbouring, batch=batch)


def part(entry: object, *, where: str = "spec[0]",
         neighbouring: str = "add-remove") -> tuple[Mechanism | Subsampled, int]:
    """One entry of a mix, ``{"mechanism": key, its parameters…, "count": n, "sampling_rate": q?,
    "neighbouring": …?, "batch_size": m?, "dataset_size": n?}`` (m of n: fixed-size sampling) →
    (mechanism, count), ``neighbouring`` the default for an entry without one;
    ``ParameterError`` fields are prefixed with ``where``
    (e.g. ``spec[2].sigma``). The CLI's ``mechanism mix --spec`` and the page's mix editor share it."""
    from dpviz.validation import check_count, check_probability

    if not isinstance(entry, dict):
        raise ParameterError(where, entry,
                             'an object such as {"mechanism": "laplace", "scale": 1, "count": 10}')
    entry = dict(entry)
    key = entry.pop("mechanism", None)
    if not isinstance(key, str) or key not in MECHANISMS:
        raise ParameterError(f"{where}.mechanism", key, "one of " + ", ".join(MECHANISMS))
    if "count" not in entry:
        raise ParameterError(f"{where}.count", None, "given: a whole number in [1, 10,000,000]")
    try:
        count = check_count(entry.pop("count"), field="count")
        rate = entry.pop("sampling_rate", None)
        neighbouring = entry.pop("neighbouring", neighbouring)
        sizes = (entry.pop("batch_size", None), entry.pop("dataset_size", None))
        if (sizes[0] is None) != (sizes[1] is None):
            raise ParameterError("batch_size/dataset_size", None, "both given (fixed-size sampling: m of n)")
        batch = (check_count(sizes[0], field="batch_size"),
                 check_count(sizes[1], field="dataset_size")) if sizes[0] is not None else None
        if rate is not None:
            rate = check_probability(rate, field="sampling_rate")
        if neighbouring not in NEIGHBOURING:
            raise ParameterError("neighbouring", neighbouring, "add-remove or replace-one")
        cls = MECHANISMS[key]
        for p in cls.params:
            if p.key in cls.required and p.key not in entry:
                raise ParameterError(p.key, None, f"given for the {key} mechanism ({p.help})")
        mech = make_sampled(key, sampling_rate=rate, neighbouring=neighbouring, batch=batch, params=entry)
        return mech, count
    except ParameterError as exc:
        raise ParameterError(f"{where}.{exc.field}", exc.value, exc.allowed) from None


MAX_MIX_PARTS = 100
"""Most entries a mix may list."""


def parts(data: object, *, field: str = "spec",
          neighbouring: str = "add-remove") -> list[tuple[Mechanism | Subsampled, int]]:
    """A mix: a JSON-like list of ``part`` entries (or ``{"mechanisms": [...]}``), 1 to ``MAX_MIX_PARTS``
    of them and at most 10,000,000 steps in all."""
    if isinstance(data, dict) and set(data) == {"mechanisms"}:
        data = data["mechanisms"]
    if not isinstance(data, list) or not 1 <= len(data) <= MAX_MIX_PARTS:
        raise ParameterError(field, str(data)[:60], f"a list of 1 to {MAX_MIX_PARTS} mechanisms")
    out = [part(entry, where=f"{field}[{i}]", neighbouring=neighbouring) for i, entry in enumerate(data)]
    total = sum(c for _, c in out)
    if total > 10_000_000:
        raise ParameterError(field, f"{total:,} steps in all", "at most 10,000,000 steps in all")
    return out


__all__ = ["KINDS", "MECHANISMS", "NEIGHBOURING", "Mechanism", "Subsampled", "make", "mechanism_class",
           "part", "parts"]
