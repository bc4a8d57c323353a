"""Real-browser fixtures: ``streamlit run app.py`` on a free localhost port, Debian's chromium
driven by Playwright (no browser download): its headless shell (``chromium-headless-shell``, the
same engine without a browser window around it, the build Playwright itself runs headless), which
drew the same pages for 21 % less CPU than the full browser in new-headless mode."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("DPVIZ_CHROMIUM", "/usr/lib/chromium/chromium-headless-shell")
# Without the background-networking flags chromium keeps dialling Google's hosts,
# which this closed network refuses.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser_type_launch_args() -> dict:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.fail("Debian's chromium-headless-shell is missing: scripts/test.sh installs it with apt")
    return {"executable_path": CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium"),
            "args": CHROMIUM_ARGS, "headless": True}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict) -> dict:
    return {**browser_context_args, "viewport": {"width": 1280, "height": 800}, "accept_downloads": True}


@pytest.fixture(scope="session")
def shared_context(browser: Browser, browser_context_args: dict) -> Iterator[BrowserContext]:
    """One browser context per test process: its HTTP cache keeps Streamlit's scripts, so a test's
    first page load does not download and compile them again (a first load took 3 s in a new context,
    1.2-1.5 s in a used one). Streamlit keeps its state in the server session of each page load, not
    in the context. Another look (a phone, dark mode) is ``look``'s; a test that opens a
    shared link "in a fresh browser", or goes offline, still makes its own context."""
    ctx = browser.new_context(**browser_context_args)
    yield ctx
    ctx.close()


@pytest.fixture(scope="session")
def receiver(browser: Browser, browser_context_args: dict) -> Iterator[BrowserContext]:
    """The browser a shared link is sent to: a context of its own, so it shares no cookie, storage or
    server session with the sender's (``shared_context``); like ``shared_context`` it keeps its HTTP
    cache between links, which saves each receiver 1.5 s of loading Streamlit's scripts. A receiver
    that has never seen the app at all is ``test_shared_url_restores_the_same_view``'s."""
    ctx = browser.new_context(**browser_context_args)
    yield ctx
    ctx.close()


MODES = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
    "dark": {"viewport": {"width": 1280, "height": 800}, "color_scheme": "dark"},
}
"""The looks a page is checked in (issue 10 item 7): a desktop, a phone (touch, mobile), dark mode."""


@pytest.fixture(scope="session")
def look(browser: Browser) -> Iterator[Callable[[str], Page]]:
    """``look(mode)``: a new tab in that look of ``MODES``. A phone (touch, mobile) is a browser
    context of its own; desktop and dark share one, a dark tab asking for the dark colour scheme
    (``emulate_media``), so that both keep Streamlit's scripts in one HTTP cache (as
    ``shared_context``: cached scripts, fresh sessions). The caller closes the tab."""
    made: dict[str, BrowserContext] = {}

    def tab(mode: str) -> Page:
        kind = "phone" if mode == "phone" else "desktop"
        if kind not in made:
            made[kind] = browser.new_context(**MODES[kind])
        page = made[kind].new_page()
        if "color_scheme" in MODES[mode]:
            page.emulate_media(color_scheme=MODES[mode]["color_scheme"])
        return page

    yield tab
    for ctx in made.values():
        ctx.close()


@pytest.fixture()
def context(shared_context: BrowserContext) -> BrowserContext:
    return shared_context


@pytest.fixture()
def page(context: BrowserContext) -> Iterator[Page]:
    """A new tab of the shared context, closed after the test."""
    tab = context.new_page()
    yield tab
    tab.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """The app served by ``streamlit run`` on 127.0.0.1; stopped at the end of the session."""
    port = _free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ROOT / "test-artifacts" / "streamlit.log", "w") as log:
        yield from _serve(port, log)


@pytest.fixture()
def cold_app_url() -> Iterator[str]:
    """A server that no browser has visited yet (for first-request behaviour)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ROOT / "test-artifacts" / "streamlit-cold.log", "w") as log:
        yield from _serve(_free_port(), log)


@pytest.fixture(scope="session")
def long_run_url() -> Iterator[str]:
    """``tests/browser/long_run.py`` (a script that runs until it is stopped) served as the app is,
    from the repository, so with the project's own ``.streamlit/config.toml``."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ROOT / "test-artifacts" / "streamlit-long-run.log", "w") as log:
        yield from _serve(_free_port(), log, script="tests/browser/long_run.py")


def _serve(port: int, log, *, script: str = "app.py") -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("streamlit did not answer /_stcore/health within 60 s")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
