"""``python -m dpviz figure VIEW [view parameters] --out FILE.svg|png|pdf|csv|json|tex|md|html``.

Renders the same figure the page shows (both call ``dpviz.views``), through kaleido and the system
Chromium (``BROWSER_PATH``, default Debian's ``chromium-headless-shell``, else ``chromium``);
``.csv`` and ``.json`` write the bytes of the page's download buttons (``dpviz.export``), ``.tex``
and ``.md`` its tables for a report (LaTeX booktabs, Markdown). Labels are Unicode and MathJax is
off, so no network resource is needed. ``.html`` (regions and curves) writes a lecture: one
self-contained interactive file, the figure under a slider over k (``dpviz.views.lecture``), which
opens offline without a server.

Every render in the process goes through one queue: one Chromium, started on first use and
reused, renders one figure at a time; a render that would wait too long is refused
(:class:`RenderBusyError`) instead of starting another browser.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Coroutine
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from dpviz import budget as budgets
from dpviz import export
from dpviz.cli import subcommand_help
from dpviz.cli.flags import add_param_flags, values_from_args
from dpviz.figures.lecture import lecture_html
from dpviz.params import BUDGET, Param
from dpviz.validation import ParameterError, check_count, check_positive
from dpviz.views.lecture import lecture_figure

FORMATS = ("svg", "png", "pdf")
DATA_FORMATS = ("csv", "json", "html")
TABLE_FORMATS = ("tex", "md")  # a display table for a report: LaTeX booktabs, Markdown
OUT_FORMATS = FORMATS + DATA_FORMATS + TABLE_FORMATS
OUT_ALLOWED = ("a file name ending in .svg, .png, .pdf, .csv, .json, .tex, .md or .html, or an existing "
               "directory")

SIZE_RANGE = (100, 8000)
"""Width and height in CSS pixels."""
SCALE_RANGE = (0.1, 10.0)
"""PNG resolution factor."""
MAX_PIXELS = 64_000_000
"""Largest PNG, width·height·scale² (Chromium returns a blank image for much larger ones)."""
MIN_BYTES = 100
"""A render shorter than this is a failed render, never a figure."""

QUEUE_LIMIT = 16
"""Renders allowed to wait behind the running one; more are refused at once."""
WAIT_SECONDS = 20.0
"""Longest wait for the render slot before a render is refused."""
START_SECONDS = 60.0
"""Longest wait for Chromium to start."""
RENDER_SECONDS = 60.0
"""Longest wait for one render."""
IDLE_SECONDS = 300.0
"""The export browser is closed after this long without a render (its memory returns)."""


def check_scale(value: object) -> float:
    """The PNG resolution factor, in ``SCALE_RANGE``."""
    lo, hi = SCALE_RANGE
    x = check_positive(value, field="png-scale", maximum=hi)
    if x < lo:
        raise ParameterError("png-scale", value, f"a number in [{lo:g}, {hi:g}]")
    return x


_size = partial(check_count, minimum=SIZE_RANGE[0], maximum=SIZE_RANGE[1])
WIDTH = Param("width", "width", 1000, partial(_size, field="width"), "Width in CSS pixels, 100 to 8000.")
HEIGHT = Param("height", "height", None, partial(_size, field="height"),
               "Height in CSS pixels, 100 to 8000 (default: the page's).")
PNG_SCALE = Param("png_scale", "PNG scale", 2.0, check_scale,
                  "PNG resolution factor, 0.1 to 10; width·height·scale² is at most "
                  f"{MAX_PIXELS // 1_000_000} million pixels.")
FIGURE_BUDGET = replace(BUDGET, help="Seconds of work the view's exact routes may take (default 60; the page "
                                     "allows about 2); beyond it they show the best bound and say why.")


class RenderError(RuntimeError):
    """Chromium could not render the figure (missing browser, crash, timeout, empty image)."""


class RenderBusyError(RenderError):
    """Another export is running and the queue is full, or the wait limit passed."""


def register(subs: argparse._SubParsersAction) -> None:
    from dpviz.views.catalog import registry

    p = subs.add_parser("figure", help=subcommand_help("figure"),
                        description="Render a view's figure headlessly, as the page shows it, or write "
                                    "the tables and payload its download buttons give.")
    views = p.add_subparsers(dest="view", required=True, parser_class=type(p))
    for spec in registry().values():
        v = views.add_parser(spec.name, help=spec.title)
        add_param_flags(v, spec.params, aliases=spec.aliases)
        v.add_argument("--which", default=None,
                       help="which figure of the view (default: the first); --list-figures lists them")
        v.add_argument("--list-figures", action="store_true", help="print the figure names and exit")
        v.add_argument("--table", default=None,
                       help="which table for --out x.csv, x.tex or x.md (default: the first); --list-tables "
                            "lists them")
        v.add_argument("--list-tables", action="store_true",
                       help="print the table names (CSV, and LaTeX/Markdown) and exit")
        v.add_argument("--out", help="output file: .svg, .png, .pdf (figure), .csv (table), .json "
                                     "(parameters and results), .tex (LaTeX booktabs table), .md "
                                     "(Markdown table) or .html (regions, curves: the figure with a slider "
                                     "over k, one file that opens offline); a directory gets a name "
                                     "carrying every input, in --format")
        v.add_argument("--format", dest="fmt", default="svg",
                       help="format when --out is a directory (svg, png, pdf, csv, json, tex, md or html; "
                            "default svg)")
        add_param_flags(v, (WIDTH, HEIGHT, PNG_SCALE, FIGURE_BUDGET), optional=("height", "budget"))
        v.set_defaults(handler=run, spec=spec)


def run(args: argparse.Namespace) -> dict[str, Any] | None:
    spec = args.spec
    values = values_from_args(args, spec.params)
    size = values_from_args(args, (WIDTH, HEIGHT, PNG_SCALE, FIGURE_BUDGET), optional=("height", "budget"))
    width, height, scale = size["width"], size.get("height"), size["png_scale"]
    if not args.list_figures and not args.list_tables:
        _output_kind(args)  # a bad --out is named before the view is computed
    budget = size.get("budget", budgets.CLI)
    view = spec.build(**values, budget=budget)
    names, tables = list(view.figures), list(view.csv)
    shown = [name for name, rows in view.tables.items() if rows]  # the display tables (.tex, .md)
    if args.list_figures:
        return {"view": spec.name, "figures": names}
    if args.list_tables:
        return {"view": spec.name, "tables": tables, "report_tables": shown}
    which = args.which or names[0]
    if which not in view.figures:
        raise ParameterError("which", which, f"one of {', '.join(names)}")
    fmt, out = _output_kind(args)
    if fmt == "html":  # before the file name below, which carries the figure's name
        which, lecture = lecture_figure(spec.name, values, which=args.which, budget=budget)
    table = None
    if fmt in TABLE_FORMATS:
        if not shown:
            raise ParameterError("out", args.out, f"not .{fmt}: this view has no table")
        table = args.table or shown[0]
        if table not in shown:
            raise ParameterError("table", table, f"one of {', '.join(shown)}")
    elif fmt == "csv":
        if not tables:
            raise ParameterError("out", args.out, "not .csv: this view has no table")
        table = args.table or tables[0]
        if table not in view.csv:
            raise ParameterError("table", table, f"one of {', '.join(tables)}")
    if out.is_dir():  # the name the page's button gives (pages/*.py): every input, then the artefact
        artefact = "" if fmt == "json" else f"_{table}" if table is not None else f"_{which}"
        out = out / f"{export.file_stem(spec.name, values)}{artefact}.{fmt}"
    _check_writable(out, args.out)
    result: dict[str, Any] = {"view": spec.name, "out": str(out), "format": fmt}
    if fmt == "csv":
        data = export.columns_csv(view.csv[table])
        result["table"], result["tables"] = table, tables
    elif fmt == "json":
        data = export.payload_json(view.payload).encode("utf-8")
    elif fmt in TABLE_FORMATS:
        caption = export.table_caption(spec.title, str(table), values)
        rows = view.tables[str(table)]
        text = (export.table_latex(rows, caption=caption, label=f"dpviz-{spec.name}-{table}") if fmt == "tex"
                else export.table_markdown(rows, caption=caption))
        data = text.encode("utf-8")
        result["table"], result["report_tables"] = table, shown
    elif fmt == "html":
        data = lecture_html(lecture, title=lecture.layout.title.text or spec.title).encode("utf-8")
        result["figure"], result["k_values"] = which, [int(f.name) for f in lecture.frames]
    else:
        fig = view.figures[which]
        h = height or int(fig.layout.height or 700)
        if fmt == "png" and width * h * scale * scale > MAX_PIXELS:
            raise ParameterError("png-scale", args.png_scale,
                                 f"small enough that width·height·scale² ≤ {MAX_PIXELS:,} pixels "
                                 f"(here {width}·{h}·{scale:g}² = {width * h * scale * scale:,.0f})")
        try:
            data = render(fig, fmt=fmt, width=width, height=h, scale=scale)
        except RenderError as exc:
            raise ParameterError("out", args.out, f"a file Chromium can render ({exc})") from None
        result["figure"] = which
    try:
        out.write_bytes(data)
    except OSError as exc:
        raise ParameterError("out", args.out, f"a writable file ({exc.strerror or exc})") from None
    result["bytes"] = len(data)
    result["parameters"] = view.payload.get("parameters", {})
    return result


def _output_kind(args: argparse.Namespace) -> tuple[str, Path]:
    """(format, path) from --out (and --format when --out is a directory)."""
    if not args.out:
        raise ParameterError("out", None, OUT_ALLOWED)
    out = Path(args.out)
    if out.is_dir():
        fmt = str(args.fmt).lower()
        if fmt not in OUT_FORMATS:
            raise ParameterError("format", args.fmt, "one of " + ", ".join(OUT_FORMATS))
        return fmt, out
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in OUT_FORMATS:
        raise ParameterError("out", args.out, OUT_ALLOWED)
    return fmt, out


def _check_writable(out: Path, given: str) -> None:
    """The parent directory exists or can be created, and a file can be written there."""
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        if out.is_dir():
            raise ParameterError("out", given, "a file name, not a directory")
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".dpviz-", delete=True):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ParameterError("out", given, f"a path in a writable directory ({reason})") from None


def render(fig: go.Figure, *, fmt: str, width: int = 1000, height: int | None = None,
           scale: float = 2.0) -> bytes:
    """The figure as SVG, PNG or PDF bytes, rendered by the process's one Chromium.

    Raises :class:`RenderBusyError` when the export queue is full, :class:`RenderError` when
    Chromium fails or returns fewer than ``MIN_BYTES`` bytes.
    """
    opts = {"format": fmt, "width": width, "height": height or fig.layout.height or 700,
            "scale": scale if fmt == "png" else 1}  # vector formats: the size is the layout's
    data = RENDERER.render(fig.to_dict(), opts)
    if not isinstance(data, bytes) or len(data) < MIN_BYTES:
        raise RenderError(f"the {fmt.upper()} came back with {len(data or b'')} bytes: "
                          "try a smaller --width, --height or --png-scale")
    return data


class Renderer:
    """One Chromium (a kaleido ≥ 1 ``Kaleido`` on its own event-loop thread), reused between
    renders, started on first use, restarted after a failure and closed after ``idle_seconds``
    without a render. ``render`` holds a bounded semaphore: one render at a time, at most
    ``queue_limit`` waiting, each at most ``wait_seconds``."""

    def __init__(self, *, queue_limit: int = QUEUE_LIMIT, wait_seconds: float = WAIT_SECONDS,
                 idle_seconds: float = IDLE_SECONDS) -> None:
        self.queue_limit = queue_limit
        self.wait_seconds = wait_seconds
        self.idle_seconds = idle_seconds
        self._idle: threading.Timer | None = None
        self._slot = threading.BoundedSemaphore(1)
        self._count_lock = threading.Lock()
        self._waiting = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._kaleido: Any = None
        self.browsers_started = 0
        """How many Chromiums this renderer has started (for tests and measurements)."""

    def render(self, fig_dict: dict, opts: dict[str, Any]) -> bytes:
        with self._count_lock:
            if self._waiting >= self.queue_limit:
                raise RenderBusyError(f"{self._waiting} exports are already waiting; try again in a moment")
            self._waiting += 1
        try:
            got = self._slot.acquire(timeout=self.wait_seconds)
        finally:
            with self._count_lock:
                self._waiting -= 1
        if not got:
            raise RenderBusyError(f"another export took longer than {self.wait_seconds:g} s; "
                                  "try again in a moment")
        try:
            return self._render(fig_dict, opts)
        finally:
            self._close_later()
            self._slot.release()

    def _close_later(self) -> None:
        """(Re)start the idle timer: no render for ``idle_seconds`` closes the browser."""
        if self._idle is not None:
            self._idle.cancel()
        self._idle = threading.Timer(self.idle_seconds, self._close_if_idle)
        self._idle.daemon = True
        self._idle.start()

    def _close_if_idle(self) -> None:
        if self._slot.acquire(blocking=False):  # a render running or queued keeps the browser
            try:
                if self._waiting == 0:
                    self._discard()
            finally:
                self._slot.release()

    def _render(self, fig_dict: dict, opts: dict[str, Any]) -> bytes:
        try:
            if self._kaleido is None:
                self._kaleido = self._run(self._open(), START_SECONDS)
            return self._run(self._kaleido.calc_fig(fig_dict, opts=opts), RENDER_SECONDS)
        except Exception as exc:  # a crashed or hung Chromium: start a fresh one next time
            self._discard()
            if isinstance(exc, RenderError):
                raise
            raise RenderError(f"Chromium failed: {type(exc).__name__}: {exc}".strip().rstrip(":")) from None

    def _run(self, coro: Coroutine[Any, Any, Any], timeout: float) -> Any:
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
            threading.Thread(target=self._loop.run_forever, name="dpviz-kaleido", daemon=True).start()
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise RenderError(f"no answer from Chromium within {timeout:g} s") from None

    async def _open(self) -> Any:
        import kaleido

        _use_system_chromium()
        _quiet_closing_bye()
        k = kaleido.Kaleido(n=1, timeout=RENDER_SECONDS, mathjax=False)
        await k.open()
        self.browsers_started += 1
        return k

    def _discard(self) -> None:
        k, self._kaleido = self._kaleido, None
        if k is not None and self._loop is not None:
            with contextlib.suppress(Exception):  # already dead: nothing left to close
                asyncio.run_coroutine_threadsafe(k.close(), self._loop).result(timeout=10)

    def close(self) -> None:
        """Close the browser (at exit; the next render starts a new one)."""
        if self._slot.acquire(timeout=5):
            try:
                self._discard()
            finally:
                self._slot.release()


RENDERER = Renderer()
"""The process-wide export queue (the Streamlit server and the CLI each have one)."""
atexit.register(RENDERER.close)


def _use_system_chromium() -> None:
    """Point kaleido at Debian's chromium unless the user chose a browser: its headless shell when
    installed (the same engine without a browser window around it: 1.2 s less CPU per start), else
    the browser itself."""
    if "BROWSER_PATH" not in os.environ:
        found = (shutil.which("chromium-headless-shell") or shutil.which("chromium")
                 or shutil.which("chromium-browser"))
        if found:
            os.environ["BROWSER_PATH"] = found


def _is_closing_bye(record: logging.LogRecord) -> bool:
    """Whether ``record`` is choreographer failing to decode its own ``{bye}`` marker as JSON.

    At close, choreographer writes ``{bye}`` into the browser's pipe to wake its reader; when that
    read also catches the browser's last message, it splits the two, fails to parse the marker,
    logs a traceback ("JSONError decoding message. Ignoring") and goes on. The render is complete
    by then; only the log line is wrong, and a user would read it as a crash."""
    error = record.exc_info[1] if isinstance(record.exc_info, tuple) else None
    cause = getattr(error, "__cause__", None)
    return str(getattr(cause, "doc", "")).strip() == "{bye}"


def _quiet_closing_bye() -> None:
    """Drop only that record from choreographer's pipe logger; every other error still shows. Called
    after ``import kaleido``, not at this module's import: a logger made before choreographer's
    logging library registers its logger class lacks the ``debug2`` level choreographer calls, and
    every render then fails."""
    pipe_log = logging.getLogger("choreographer.channels.pipe")
    if not any(getattr(f, "__name__", "") == "dpviz_closing_bye" for f in pipe_log.filters):
        def dpviz_closing_bye(record: logging.LogRecord) -> bool:
            return not _is_closing_bye(record)
        pipe_log.addFilter(dpviz_closing_bye)
