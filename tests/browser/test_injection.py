"""Injection through a shared link or a text box, in a real browser (issue 14): Markdown image and
link, colour directive, raw HTML, script, autolinks and LaTeX put in every URL parameter of every
page and typed into text inputs (every payload in every key and box is the in-process fuzz's,
tests/app/test_url_fuzz.py). Nothing may be fetched from anywhere but the app's own
server, no element may point at the payload's host, and no payload text may be formatted.

Payloads name 127.0.0.9: loopback, so a test machine sends nothing out, yet not the server's
address (127.0.0.1), so any request to it is a failure."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlencode, urlparse

import pytest
from playwright.sync_api import BrowserContext, Page

from dpviz.gce.questions import PRESETS
from dpviz.ui import SHOWN_CHARS
from dpviz.views import attack as av
from dpviz.views.database_priors import KIND_LABELS, PRESET_TITLES
from dpviz.views.planner import SPEC as PLANNER
from tests.app.helpers import LOOPBACK, PAYLOADS
from tests.app.test_url_fuzz import PAGES
from tests.browser.conftest import ARTIFACTS
from tests.browser.test_app_in_browser import TIMEOUT_MS, open_page, settle

BROWSER_PAYLOADS = (" ".join(PAYLOADS[0:2]), " ".join(PAYLOADS[2:5]), " ".join(PAYLOADS[5:8]))
"""Markdown image, colour directive and link | <img>, <script> and <a> | autolinks, LaTeX, icon and
emoji shortcodes: three values, each short enough to be echoed whole, so three loads give every
key every payload."""
KEYS = {p.path: p.keys for p in PAGES} | {
    "pages/3_Database_priors.py": [*next(p.keys for p in PAGES if p.path == "pages/3_Database_priors.py"),
                                   "prior", "null", "allowed"],
    "pages/4_Mechanisms.py": [*next(p.keys for p in PAGES if p.path == "pages/4_Mechanisms.py"), "mix"],
    "pages/5_Plan_a_budget.py": [p.key for p in PLANNER.params],
    "pages/6_Attack_lab.py": ["mechanism", *(p.key for p in (*av.MECH_PARAMS, *av.ATTACK_PARAMS,
                                                             *av.ALICE_PARAMS))],
}
ROUTES = {"app.py": "", "pages/1_Privacy_regions.py": "Privacy_regions",
          "pages/2_Composition_curves.py": "Composition_curves",
          "pages/3_Database_priors.py": "Database_priors", "pages/4_Mechanisms.py": "Mechanisms",
          "pages/5_Plan_a_budget.py": "Plan_a_budget", "pages/6_Attack_lab.py": "Attack_lab"}

# (page, valid choices that draw more inputs, keys that get payloads)
SCENARIOS = [
    ("app.py", {}, ["eps0", "k", "preset", "mechanism", "het_rows"]),  # keys the home page ignores
    ("pages/1_Privacy_regions.py", {}, KEYS["pages/1_Privacy_regions.py"]),
    ("pages/2_Composition_curves.py", {}, KEYS["pages/2_Composition_curves.py"]),
    ("pages/3_Database_priors.py", {}, KEYS["pages/3_Database_priors.py"]),
    *[("pages/3_Database_priors.py", {"preset": PRESETS[name].title},
       [k for k in KEYS["pages/3_Database_priors.py"] if k != "preset"])
      for name in ("custom",)],  # its own inputs; the other presets draw the default's
    ("pages/4_Mechanisms.py", {}, KEYS["pages/4_Mechanisms.py"]),
    *[("pages/4_Mechanisms.py", {"mechanism": kind}, [k for k in KEYS["pages/4_Mechanisms.py"]
                                                     if k != "mechanism"])
      for kind in ("Laplace",)],  # a mechanism of other parameters than the default's
    *[("pages/3_Database_priors.py", {"preset": PRESET_TITLES["custom"], "kind": KIND_LABELS[kind]},
       ["prior", "null", "allowed"]) for kind in ("typed", "allowed")],
    ("pages/5_Plan_a_budget.py", {}, KEYS["pages/5_Plan_a_budget.py"]),
    ("pages/6_Attack_lab.py", {}, KEYS["pages/6_Attack_lab.py"]),
]

# Text that only a formatted payload would put outside a code span in the page's DOM; the last
# entry lists the words a payload puts in emphasis (bold, em), each checked as a whole element.
RENDERED_MARKERS = [LOOPBACK, "Session expired", "Log in again", "pwned", "frac{1}{2}", "x^2",
                    "bold|em|Session expired|click"]

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
  // a heading is text and code spans too: no link, image, icon or emphasis from a payload
  for (const el of document.querySelectorAll('[data-testid=stHeading] *')) {
    if (['A', 'IMG', 'STRONG', 'EM'].includes(el.tagName) || el.matches('[data-testid=stIconMaterial]')) {
      if (!el.closest('[data-testid=stHeaderActionElements]')) {  // Streamlit's own anchor link
        bad.push(`<${el.tagName.toLowerCase()}> in a heading: ${el.outerHTML.slice(0, 120)}`);
      }
    }
  }
  // anywhere: no link or image pointing at a payload's host, no emphasis holding a payload's words
  for (const el of document.querySelectorAll('a[href], img[src]')) {
    const url = el.getAttribute(el.tagName === 'A' ? 'href' : 'src') || '';
    if (url.includes(':9/')) bad.push(`<${el.tagName.toLowerCase()}> to ${url}`);
  }
  for (const el of document.querySelectorAll('strong, em')) {
    if (markers.slice(-1)[0].split('|').includes(el.textContent.trim()) && !el.closest('code')) {
      bad.push(`emphasis from a payload: ${el.outerHTML.slice(0, 120)}`);
    }
  }
  return bad;
}"""


class Watch:
    """Every request the browser context makes, and every dialog a script opens."""

    def __init__(self, context: BrowserContext, page: Page, app_url: str) -> None:
        self.netloc = urlparse(app_url).netloc
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
        if parsed.netloc != self.netloc:  # the app's host and port: the issue's payloads name 127.0.0.1:9
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
def watch(context: BrowserContext, page: Page, app_url: str) -> Iterator[Watch]:
    """The context is shared by the tests of a process: its listener goes with the test."""
    w = Watch(context, page, app_url)
    yield w
    context.remove_listener("request", w._request)


@pytest.mark.parametrize("turn,path,fixed,keys", [(i, *s) for i, s in enumerate(SCENARIOS)],
                         ids=[f"{p.split('/')[-1][:-3]}-{'-'.join(f.values()) or 'default'}"
                              for p, f, _ in SCENARIOS])
def test_payloads_in_every_url_parameter(page: Page, app_url: str, watch: Watch, turn, path, fixed, keys):
    """One load per scenario: key j gets payload (turn + j) mod n, so every load carries all n
    payloads (each scenario has at least n keys) and a page's scenarios give its keys different
    ones. Every value a page rejects is shown by the one escape point (``ui.code``), so the browser's
    part is to see that this drawing renders none of them; every payload in every key, on every
    page, is the in-process fuzz's (tests/app/test_url_fuzz.py, tests/app/test_hostile_links.py)."""
    n = len(BROWSER_PAYLOADS)
    assert len(keys) >= n
    query = {**fixed, **{key: BROWSER_PAYLOADS[(turn + j) % n] for j, key in enumerate(keys)}}
    url = f"{app_url}/{ROUTES[path]}?{urlencode(query)}"
    open_page(page, url)
    watch.check(page, url)
    if path != "app.py":
        assert page.locator("[data-testid=stAlertContainer] code").count() > 0, "the notices show"


@pytest.mark.parametrize("path", [p for p in ROUTES if p != "app.py"], ids=lambda p: ROUTES[p])
def test_payloads_typed_into_text_inputs(page: Page, app_url: str, watch: Watch, path):
    """Each payload typed into one text input of the page (the first, the middle and the last box),
    a rerun each, as a person types: a typed value takes the path of a linked one to the same
    notice; every payload in every text input of every page is tests/app/test_url_fuzz.py's."""
    open_page(page, f"{app_url}/{ROUTES[path]}")
    drawn(page)
    boxes = page.locator("[data-testid=stTextInput] input")
    total = boxes.count()
    assert total > 0
    chosen = sorted({0, total // 2, total - 1})
    count = len(chosen)
    for n, i in enumerate(chosen):
        payload = BROWSER_PAYLOADS[n % len(BROWSER_PAYLOADS)]
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


ISSUE_22_URLS = [
    "Plan_a_budget?prior=at-least%3A%21%5Bx%5D%28http%3A%2F%2F127.0.0.1%3A9%2Fprior.png%29",
    "Plan_a_budget?" + urlencode({"prior": "at-least:[click](http://127.0.0.1:9/plink)"}),
    "Plan_a_budget?" + urlencode({"prior": "at-least:http://127.0.0.1:9/auto"}),
    "Plan_a_budget?" + urlencode({"prior": "at-least::material/home: **bold**"}),
    "Mechanisms?" + urlencode({"mix": '[{"mechanism":"gaussian","sigma":1,"count":1,'
                                      '"![x](http://127.0.0.1:9/mixkey.png)":1}]'}),
    "Mechanisms?" + urlencode({"mix": '[{"mechanism":"gaussian","sigma":1,"count":1,'
                                      '"[click](http://127.0.0.1:9/l) **bold** :material/home:":1}]'}),
]
"""The links of issue 22 items 1 and 2, as filed (the payload host 127.0.0.1:9 is the server's address
on another port: ``Watch`` compares host and port)."""


@pytest.mark.parametrize("path", ISSUE_22_URLS, ids=range(len(ISSUE_22_URLS)))
def test_issue_22_links(page: Page, app_url: str, watch: Watch, path: str):
    url = f"{app_url}/{path}"
    open_page(page, url)
    watch.check(page, url)
    notices = page.locator("[data-testid=stAlertContentError]")
    assert notices.count() > 0, "the rejected value is named"
    assert notices.locator("code").count() > 0, "and echoed as code"
    if path == ISSUE_22_URLS[0]:  # for a person to look at: a planner prior's notice
        notices.last.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        page.screenshot(path=str(ARTIFACTS / "injection_planner_prior_1280x800.png"))
