"""A long run says so (issue 20, "feedback"): while a page computes, the toolbar shows Streamlit's
running indicator and its Stop button (the toolbar is otherwise minimal: one "About" item), and the
planner's spinner names what takes long."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.test_app_in_browser import IDLE, TIMEOUT_MS

# values no other test asks for: the answer is not cached yet, so the run takes seconds
SLOW = "Plan_a_budget?epsilon=2.9&k=99999&sampling_rate=0.0041"


def test_a_long_run_shows_running_and_stop(page: Page, app_url: str) -> None:
    page.goto(f"{app_url}/{SLOW}")
    expect(page.locator("[data-testid=stStatusWidgetRunningIcon]")).to_be_visible()
    expect(page.get_by_text("the subsampled Gaussian's σ is searched with the PLD")).to_be_visible()
    stop = page.get_by_role("button", name="Stop")
    expect(stop).to_be_visible()
    stop.click()
    page.wait_for_selector(IDLE, timeout=TIMEOUT_MS)
    expect(page.locator("[data-testid=stStatusWidgetRunningIcon]")).to_have_count(0)
    assert page.locator("[data-testid=stException]").count() == 0
