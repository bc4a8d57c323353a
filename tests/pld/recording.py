"""The widths a PLD refinement composes, recorded (for the tests of its choices)."""

from __future__ import annotations

from dpviz.pld import refine


def composed_widths(monkeypatch) -> list[float]:
    """A list that ``refine.compose`` appends each width it is called with to, while ``monkeypatch``
    holds (``monkeypatch.undo()`` ends it)."""
    hs: list[float] = []
    orig = refine.compose

    def recording(parts, *, h, **kw):
        hs.append(h)
        return orig(parts, h=h, **kw)

    monkeypatch.setattr(refine, "compose", recording)
    return hs
