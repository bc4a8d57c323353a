"""A composition's parts and its target, checked once for every accounting route.

A composition is a list of parts ``(mechanism, count)`` (one part: k steps of one mechanism; several:
a heterogeneous mix); each route answers ε at δ (``delta=``) or δ at ε (``epsilon=``), exactly one.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpviz.mechanisms.base import Accountable
from dpviz.validation import ParameterError, check_count, check_delta, check_epsilon

Part = tuple[Accountable, int]
"""(mechanism, count): a registered ``Mechanism`` or a ``Subsampled`` one, and how many times."""

def checked_parts(parts: Sequence[Part]) -> list[Part]:
    """The parts with each count checked (named ``k`` for one part, ``count`` for a mix), at most
    10,000,000 steps in all."""
    if not parts:
        raise ParameterError("mechanisms", "[]", "a non-empty list")
    out = [(m, check_count(c, field="count" if len(parts) > 1 else "k")) for m, c in parts]
    total = sum(c for _, c in out)
    if total > 10_000_000:
        raise ParameterError("count", f"{total:,} in all", "at most 10,000,000 steps in all")
    return out


def checked_target(delta: float | None, epsilon: float | None) -> tuple[float | None, float | None]:
    """(δ, None) or (None, ε), each checked: exactly one of the two is given."""
    if (delta is None) == (epsilon is None):
        raise ParameterError("delta", delta, "given, or else epsilon (exactly one of the two)")
    if delta is not None:
        return check_delta(delta, field="delta"), None
    return None, check_epsilon(epsilon, field="epsilon", maximum=1e6)

