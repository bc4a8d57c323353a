"""Reading what a page drew, as a person would see it, from AppTest elements."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120  # seconds per run: generous for a loaded 2-core CI machine


def run_page(path: str, **params: str) -> AppTest:
    """Run a page file (path relative to the repository root) with URL query parameters."""
    at = AppTest.from_file(str(ROOT / path), default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def figures(at: AppTest) -> list[dict[str, Any]]:
    """The plotly figure specs (JSON) of every chart on the page."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def trace_names(fig: dict[str, Any]) -> list[str]:
    return [t.get("name", "") for t in fig["data"]]


def tables(at: AppTest) -> list[pd.DataFrame]:
    """The page's result tables (``st.dataframe``, not the data editors), in page order."""
    return [el.value for el in at.dataframe if not el.proto.editing_mode]


def editors(at: AppTest) -> list[pd.DataFrame]:
    """The data editors' tables, in page order."""
    return [el.value for el in at.dataframe if el.proto.editing_mode]


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


# --- Injection payloads and how to tell shown text from formatted text ------------------------

LOOPBACK = "127.0.0.9"
"""Host named by every payload: loopback, yet not the address the app is served from."""

PAYLOADS = (
    f"![t](http://{LOOPBACK}:9/pixel.png)",
    f":red[**Session expired**] [Log in again](http://{LOOPBACK}:9/login)",
    f"<img src=http://{LOOPBACK}:9/x.png>",
    "<script>document.title='pwned'</script>",
    f'<a href="http://{LOOPBACK}:9/a">click</a>',
    f"http://{LOOPBACK}:9/autolink and <http://{LOOPBACK}:9/angle>",
    r"$\frac{1}{2}$ and $$x^2$$",
    ":material/home: :smile: :red-background[x]",
    "``code`` ` and *em* _em_ ~~strike~~",
    "# Heading\n- item\n> quote",
)
"""Markdown image, link, colour directive, raw HTML, script, autolinks, LaTeX, icon and emoji
shortcodes, backticks and block syntax: what a shared link could try to get rendered."""

MARKERS = (LOOPBACK, "![", "](", ":red[", "**Session", "<img", "<script", "<a ", "$\\frac", "$$",
           ":material/", ":smile:", ":red-background", "~~", "# Heading")
"""Pieces of the payloads that must never stand outside a code span in rendered Markdown."""


def split_code_spans(markdown: str) -> tuple[str, list[str]]:
    """(the text outside code spans, the contents of the code spans), as CommonMark reads them:
    a run of n backticks opens a span that the next run of exactly n backticks closes."""
    outside: list[str] = []
    inside: list[str] = []
    i = 0
    while i < len(markdown):
        if markdown[i] != "`":
            outside.append(markdown[i])
            i += 1
            continue
        j = i
        while j < len(markdown) and markdown[j] == "`":
            j += 1
        opener, close = markdown[i:j], None
        for m in re.finditer(r"`+", markdown[j:]):
            if len(m.group()) == len(opener):
                close = m
                break
        if close is None:
            outside.append(opener)
            i = j
            continue
        content = markdown[j:j + close.start()].replace("\n", " ")
        if len(content) > 1 and content[0] == content[-1] == " " and content.strip(" "):
            content = content[1:-1]
        inside.append(content)
        i = j + close.end()
    return "".join(outside), inside


def rendered_markdown(at: AppTest) -> list[str]:
    """Every string the page hands to Streamlit's Markdown renderer: text, headings, captions,
    alerts and table cells."""
    texts: list[str] = []
    for kind in ("markdown", "caption", "title", "header", "subheader", "error", "warning", "info",
                 "success"):
        texts += [str(el.value) for el in getattr(at, kind)]
    for table in at.table:
        frame = table.value
        texts += [str(c) for c in frame.columns]
        texts += [str(v) for v in frame.to_numpy().ravel()]
    return texts


def assert_inert(at: AppTest) -> None:
    """No payload piece outside a code span anywhere on the page."""
    for text in rendered_markdown(at):
        outside, _ = split_code_spans(text)
        found = [m for m in MARKERS if m in outside]
        assert not found, f"formatted payload {found} in {text!r}"
