"""Read a Plotly SVG export: where each legend item and the x-axis title are drawn."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

SVG = "{http://www.w3.org/2000/svg}"
_TRANSLATE = re.compile(r"translate\(\s*([-\d.e]+)[ ,]+([-\d.e]+)\s*\)")


@dataclass(frozen=True)
class LegendItem:
    text: str
    left: float
    right: float
    top: float
    bottom: float


@dataclass(frozen=True)
class Legend:
    width: float
    height: float
    items: list[LegendItem]
    clip: tuple[float, float, float, float]
    """(left, top, right, bottom) of the legend's clip box: anything outside it is not drawn."""
    x_title_bottom: float | None


def _shift(el: ET.Element) -> tuple[float, float]:
    m = _TRANSLATE.search(el.get("transform", ""))
    return (float(m.group(1)), float(m.group(2))) if m else (0.0, 0.0)


def _classes(el: ET.Element) -> set[str]:
    return set(el.get("class", "").split())


def read_legend(svg: bytes) -> Legend:
    root = ET.fromstring(svg)
    _, _, width, height = (float(v) for v in root.get("viewBox", "").split())
    clips = {c.get("id"): c.find(f"{SVG}rect") for c in root.iter(f"{SVG}clipPath")}
    parents = {child: parent for parent in root.iter() for child in parent}

    def origin(el: ET.Element) -> tuple[float, float]:
        x = y = 0.0
        while el is not None:
            dx, dy = _shift(el)
            x, y = x + dx, y + dy
            el = parents.get(el)
        return x, y

    legends = [g for g in root.iter(f"{SVG}g") if "legend" in _classes(g)]
    assert len(legends) == 1, f"{len(legends)} legends"
    legend = legends[0]
    lx, ly = origin(legend)
    box = legend.find(f"{SVG}g[@class='scrollbox']")
    clip_id = re.search(r"url\(#([^)]+)\)", box.get("clip-path", "")).group(1)
    rect = clips[clip_id]
    cx, cy = lx + float(rect.get("x", 0)), ly + float(rect.get("y", 0))
    clip = (cx, cy, cx + float(rect.get("width")), cy + float(rect.get("height")))
    items = []
    for g in legend.iter(f"{SVG}g"):
        if "traces" not in _classes(g):
            continue
        tx, ty = origin(g)
        text = g.find(f"{SVG}text")
        toggle = g.find(f"{SVG}rect[@class='legendtoggle']")
        left = tx + float(toggle.get("x", 0))
        top = ty + float(toggle.get("y", 0))
        items.append(LegendItem(text="".join(text.itertext()), left=left,
                                right=left + float(toggle.get("width")), top=top,
                                bottom=top + float(toggle.get("height"))))
    x_title_bottom = None
    for t in root.iter(f"{SVG}text"):
        if "xtitle" in _classes(t):
            size = float(re.search(r"font-size:\s*([\d.]+)px", t.get("style", "")).group(1))
            x_title_bottom = origin(t)[1] + float(t.get("y")) + 0.3 * size  # baseline + descent
    return Legend(width=width, height=height, items=items, clip=clip, x_title_bottom=x_title_bottom)
