"""A long run says so (issue 20, "feedback").

- While a script runs, the toolbar shows Streamlit's running indicator and its Stop button (the
  project's toolbar is otherwise minimal: one "About" item), and Stop ends the run without an error
  box. Checked on a script that runs until stopped (``long_run.py``), under the project's config: the
  app's own pages now answer most changes in well under a second, too quickly to click Stop on (this
  test used a planner search of several seconds, then a Mechanisms refinement of two; both got fast
  and the test flaked).
- A change the core estimates above a second names what runs and for how long at once. The notice
  is on screen only while the run lasts, so the page records every text it shows from its first
  byte on (a ``MutationObserver``) and the test reads the record afterwards: no race with the run."""

from __future__ import annotations

from urllib.parse import urlencode

from playwright.sync_api import Page, expect

from tests.browser.test_app_in_browser import IDLE, TIMEOUT_MS

RUNNING = "[data-testid=stStatusWidgetRunningIcon]"


def test_a_long_run_shows_running_and_stop(page: Page, long_run_url: str) -> None:
    page.goto(long_run_url)
    expect(page.get_by_text("running for")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator(RUNNING)).to_be_visible()
    stop = page.get_by_role("button", name="Stop")
    expect(stop).to_be_visible()
    stop.click()
    page.wait_for_selector(IDLE, timeout=TIMEOUT_MS)
    expect(page.locator(RUNNING)).to_have_count(0)
    stopped_at = page.get_by_text("running for").inner_text()
    page.wait_for_timeout(500)
    assert page.get_by_text("running for").inner_text() == stopped_at  # the run really ended
    assert page.get_by_text("ran to the end").count() == 0
    assert page.locator("[data-testid=stException]").count() == 0


# values no other browser test asks for (the answer is not cached in the server), and the same
# setting as tests/app/test_feedback_notice.py, whose estimate is above NOTICE_SECONDS
NOTICED = "Mechanisms?" + urlencode({"mechanism": "gaussian", "sigma": "0.8", "sampling_rate": "0.001",
                                     "k": "100000", "compare": "true"})

RECORD = """
window.__shown = [];
new MutationObserver(() => {
  const text = document.documentElement.textContent || "";
  const found = text.match(/Refining with [^…]*: about [^…]*…/);
  if (found && !window.__shown.includes(found[0])) window.__shown.push(found[0]);
}).observe(document, {subtree: true, childList: true, characterData: true});  // no <html> element yet
"""


def test_a_slow_estimate_is_said_at_once(page: Page, app_url: str) -> None:
    page.add_init_script(RECORD)
    page.goto(f"{app_url}/{NOTICED}")
    page.wait_for_selector("h1", timeout=TIMEOUT_MS)
    page.wait_for_selector(IDLE, timeout=TIMEOUT_MS)
    expect(page.get_by_text("Refined (")).to_be_visible(timeout=TIMEOUT_MS)
    shown = page.evaluate("window.__shown")
    assert any(s.startswith("Refining with the PLD grid and privacy buckets: about ") for s in shown), shown
    assert page.locator("[data-testid=stException]").count() == 0
