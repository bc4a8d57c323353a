"""``python -m dpviz figure VIEW [view parameters] --out FILE.svg|png|pdf``.

Renders the same figure the page shows (both call ``dpviz.views``), through kaleido
and the system Chromium (``BROWSER_PATH``, default ``/usr/bin/chromium``). Labels
are Unicode, so no MathJax or other network resource is needed.
"""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from dpviz.validation import ParameterError

FORMATS = ("svg", "png", "pdf")


def register(subs: argparse._SubParsersAction) -> None:
    from dpviz.views import registry

    p = subs.add_parser("figure", help="export a page's figure to SVG, PNG or PDF",
                        description="Render a view's figure headlessly, as the page shows it.")
    views = p.add_subparsers(dest="view", required=True, parser_class=type(p))
    for spec in registry().values():
        v = views.add_parser(spec.name, help=spec.title)
        for param in spec.params:
            v.add_argument(f"--{param.key.replace('_', '-')}", dest=param.key, default=None,
                           help=f"{param.label} (default {param.default})")
        v.add_argument("--which", default=None,
                       help="which figure of the view (default: the first); --list-figures lists them")
        v.add_argument("--list-figures", action="store_true", help="print the figure names and exit")
        v.add_argument("--out", help="output file: .svg, .png or .pdf")
        v.add_argument("--width", type=int, default=1000, help="width in CSS pixels (default 1000)")
        v.add_argument("--height", type=int, default=None, help="height in CSS pixels (default: the page's)")
        v.add_argument("--png-scale", dest="png_scale", type=float, default=2.0,
                       help="PNG resolution factor (default 2)")
        v.set_defaults(handler=run, spec=spec)


def run(args: argparse.Namespace) -> dict[str, Any] | None:
    spec = args.spec
    values = {p.key: p.check(p.default if getattr(args, p.key) is None else getattr(args, p.key))
              for p in spec.params}
    view = spec.build(**values)
    names = list(view.figures)
    if args.list_figures:
        return {"view": spec.name, "figures": names}
    which = args.which or names[0]
    if which not in view.figures:
        raise ParameterError("which", which, f"one of {', '.join(names)}")
    if not args.out:
        raise ParameterError("out", None, "a file name ending in .svg, .png or .pdf")
    out = Path(args.out)
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ParameterError("out", args.out, "a file name ending in .svg, .png or .pdf")
    if not 100 <= args.width <= 8000:
        raise ParameterError("width", args.width, "a whole number in [100, 8000]")
    if not 0.1 <= args.png_scale <= 10:
        raise ParameterError("png-scale", args.png_scale, "a number in [0.1, 10]")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(render(view.figures[which], fmt=fmt, width=args.width, height=args.height,
                           scale=args.png_scale))
    return {"view": spec.name, "figure": which, "out": str(out), "format": fmt,
            "parameters": view.payload.get("parameters", {})}


def render(fig: go.Figure, *, fmt: str, width: int = 1000, height: int | None = None,
           scale: float = 2.0) -> bytes:
    """The figure as SVG, PNG or PDF bytes through kaleido and the system Chromium."""
    _use_system_chromium()
    return fig.to_image(format=fmt, width=width, height=height or fig.layout.height or 700, scale=scale)


def _use_system_chromium() -> None:
    """Point kaleido at Debian's chromium unless the user chose a browser."""
    if "BROWSER_PATH" not in os.environ:
        found = shutil.which("chromium") or shutil.which("chromium-browser")
        if found:
            os.environ["BROWSER_PATH"] = found
