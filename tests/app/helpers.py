"""Reading what a page drew, as a person would see it, from AppTest elements."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
