"""Temporary shim: ``GceBound`` is now :class:`dpviz.guarantee.Guarantee` (``directions``, ``note``).

Kept only until the figure and view modules import from :mod:`dpviz.guarantee`; then removed.
"""

from __future__ import annotations

from dpviz.guarantee import DIRECTION_TEXT, Direction, Guarantee


def GceBound(guarantee: Guarantee, directions: Direction = "both", note: str = "") -> Guarantee:
    """The former wrapper's constructor: the guarantee with its directions and note."""
    return guarantee.with_directions(directions, note)


__all__ = ["DIRECTION_TEXT", "Direction", "GceBound"]
