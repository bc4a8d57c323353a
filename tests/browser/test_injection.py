"""Injection through a shared link or a text box, in a real browser (issue 14): Markdown image and
link, colour directive, raw HTML, script, autolinks and LaTeX put in every URL parameter of every
page and typed into every text input. Nothing may be fetched from anywhere but the app's own
server, no element may point at the payload's host, and no payload text may be formatted.

Payloads name 127.0.0.9: loopback, so a test machine sends nothing out, yet not the server's
address (127.0.0.1), so any request to it is a failure."""

from __future__ import annotations

from urllib.parse import urlencode, urlparse

import pytest
from playwright.sync_api import BrowserContext, Page

from dpviz.ui import SHOWN_CHARS
from dpviz.views.gce_questions import PRESETS
from tests.app.helpers import LOOPBACK, PAYLOADS
from tests.app.test_url_fuzz import PAGES
from tests.browser.conftest import ARTIFACTS
from tests.browser.test_app_in_browser import TIMEOUT_MS, open_page, settle

BROWSER_PAYLOADS = (" ".join(PAYLOADS[0:2]), " ".join(PAYLOADS[2:5]), " ".join(PAYLOADS[5:8]))
"""Markdown image, colour directive and link | <img>, <script> and <a> | autolinks, LaTeX, icon and
emoji shortcodes: three values, each short enough to be echoed whole, so three loads give every
key every payload."""
KEYS = {p.path: p.keys for p in PAGES}
ROUTES = {"app.py": "", "pages/1_Privacy_regions.py": "Privacy_regions",
          "pages/2_Composition_curves.py": "Composition_curves",
          "pages/3_Database_priors.py": "Database_priors", "pages/4_Mechanisms.py": "Mechanisms"}

# (page, valid choices that draw more inputs, keys that get payloads)
SCENARIOS = [
    ("app.py", {}, ["eps0", "k", "preset", "mechanism", "het_rows"]),  # keys the home page ignores
    ("pages/1_Privacy_regions.py", {}, KEYS["pages/1_Privacy_regions.py"]),
    ("pages/2_Composition_curves.py", {}, KEYS["pages/2_Composition_curves.py"]),
    ("pages/3_Database_priors.py", {}, KEYS["pages/3_Database_priors.py"]),
    *[("pages/3_Database_priors.py", {"preset": PRESETS[name].title},
       [k for k in KEYS["pages/3_Database_priors.py"] if k != "preset"])
      for name in ("custom", "features", "atleast")],
    ("pages/4_Mechanisms.py", {}, KEYS["pages/4_Mechanisms.py"]),
    *[("pages/4_Mechanisms.py", {"mechanism": kind}, [k for k in KEYS["pages/4_Mechanisms.py"]
                                                     if k != "mechanism"])
      for kind in ("Laplace", "Geometric")],
]

# Text that only a formatted payload would put outside a code span in the page's DOM.
RENDERED_MARKERS = [LOOPBACK, "Session expired", "Log in again", "pwned", "frac{1}{2}", "x^2"]

FIND_INJECTED = """(markers) => {
  const bad = [];
  for (const el of document.querySelectorAll('*')) {
    if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') continue;  // the typed text itself
    for (const a of el.attributes) {
      if (a.value.includes(markers[0])) bad.push(`<${el.tagName.toLowerCase()} ${a.name}="${a.value}">`);
    }
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.nodeValue;
    if (markers.some(m => text.includes(m)) && !n.parentElement.closest('code')) {
      bad.push(`text outside code in <${n.parentElement.tagName.toLowerCase()}>: ${text.slice(0, 120)}`);
    }
  }
  // an error notice is a paragraph of text and code spans: no icon, emoji, colour, link, image
  const notice = '[data-testid=stAlertContentError] [data-testid=stMarkdownContainer] *';
  for (const el of document.querySelectorAll(notice)) {
    if (!['P', 'CODE'].includes(el.tagName)) {
      bad.push(`<${el.tagName.toLowerCase()}> in a notice: ${el.outerHTML.slice(0, 120)}`);
    }
  }
  return bad;
}"""


class Watch:
    """Every request the browser context makes, and every dialog a script opens."""

    def __init__(self, context: BrowserContext, page: Page, app_url: str) -> None:
        self.host = urlparse(app_url).hostname
        self.foreign: list[str] = []
        self.dialogs: list[str] = []
        context.on("request", self._request)
        page.on("websocket", lambda ws: self._url(ws.url))
        page.on("dialog", self._dialog)

    def _request(self, request) -> None:
        self._url(request.url)

    def _url(self, url: str) -> None:
        parsed = urlparse(url)
        if parsed.scheme in ("data", "blob", "about"):
            return
        if parsed.hostname != self.host:
            self.foreign.append(url)

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def check(self, page: Page, where: str) -> None:
        drawn(page)
        assert not self.foreign, f"{where}: requests left the app's server: {self.foreign}"
        assert not self.dialogs, f"{where}: a script opened dialogs: {self.dialogs}"
        assert page.title() != "pwned", f"{where}: a payload script ran"
        injected = page.evaluate(FIND_INJECTED, RENDERED_MARKERS)
        assert not injected, f"{where}: payload rendered: {injected}"
        assert page.locator("[data-testid=stException]").count() == 0, f"{where}: exception box"


def drawn(page: Page) -> None:
    """Wait until no element is still a loading skeleton: Markdown and widgets are drawn by lazily
    loaded components, which on a loaded machine can arrive after the script is idle."""
    page.wait_for_function("() => !document.querySelector('[data-testid=stSkeleton]')",
                           timeout=TIMEOUT_MS)


@pytest.fixture()
def watch(context: BrowserContext, page: Page, app_url: str) -> Watch:
    return Watch(context, page, app_url)


@pytest.mark.parametrize("path,fixed,keys", SCENARIOS,
                         ids=[f"{p.split('/')[-1][:-3]}-{'-'.join(f.values()) or 'default'}"
                              for p, f, _ in SCENARIOS])
def test_payloads_in_every_url_parameter(page: Page, app_url: str, watch: Watch, path, fixed, keys):
    """Each key gets each payload once: load i gives key j payload (i + j) mod n."""
    n = len(BROWSER_PAYLOADS)
    for i in range(n):
        query = {**fixed, **{key: BROWSER_PAYLOADS[(i + j) % n] for j, key in enumerate(keys)}}
        url = f"{app_url}/{ROUTES[path]}?{urlencode(query)}"
        open_page(page, url)
        watch.check(page, url)
        if path != "app.py":
            assert page.locator("[data-testid=stAlertContainer] code").count() > 0, "the notices show"


@pytest.mark.parametrize("path", [p for p in ROUTES if p != "app.py"], ids=lambda p: ROUTES[p])
def test_payloads_typed_into_every_text_input(page: Page, app_url: str, watch: Watch, path):
    open_page(page, f"{app_url}/{ROUTES[path]}")
    drawn(page)
    boxes = page.locator("[data-testid=stTextInput] input")
    count = boxes.count()
    assert count > 0
    for i in range(count):
        payload = BROWSER_PAYLOADS[i % len(BROWSER_PAYLOADS)]
        before = page.url
        boxes.nth(i).fill(payload)
        boxes.nth(i).press("Enter")
        page.wait_for_url(lambda url, before=before: url != before, timeout=TIMEOUT_MS)
        settle(page)
        watch.check(page, f"{path}, text input {i}")
    alerts = page.locator("[data-testid=stAlertContainer]")
    assert alerts.locator("code").count() >= count, "every rejected payload is echoed as code"


def test_payloads_are_echoed_whole():
    assert all(len(repr(p)) <= SHOWN_CHARS for p in BROWSER_PAYLOADS)


def test_screenshot_of_injected_payload_notices(page: Page, app_url: str, watch: Watch):
    """For a person to look at: the notices a malicious link produces."""
    query = {"het_delta": PAYLOADS[0], "delta": PAYLOADS[1], "sampling_rate": PAYLOADS[2],
             "mechanism": "Quantum"}
    open_page(page, f"{app_url}/Mechanisms?{urlencode(query)}")
    watch.check(page, "screenshot")
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.wait_for_timeout(400)
    page.screenshot(path=str(ARTIFACTS / "injection_notices_1280x1000.png"))
    page.locator("[data-testid=stAlertContainer]").last.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    page.screenshot(path=str(ARTIFACTS / "injection_notice_het_delta_1280x1000.png"))
