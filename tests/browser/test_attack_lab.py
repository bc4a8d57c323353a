"""The attack lab in a real browser (issue 13): the headline numbers and the figure, the Alice
example's rule changed by a person and kept in the URL, the mechanism switched, the CSV download
is the view's bytes, a fresh phone-width browser opening the shared URL sees the same numbers;
screenshots at 1280 and 390 px (test-artifacts/screenshots/attack_*.png)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser, Page

from dpviz import export
from dpviz.views import attack as av
from tests.browser.conftest import ARTIFACTS
from tests.browser.test_app_in_browser import TIMEOUT_MS, open_page
from tests.browser.test_layout import TOP
from tests.browser.test_share_links import query, radio, text

METRICS = "() => Array.from(document.querySelectorAll('[data-testid=stMetricValue]'), m => m.innerText)"
TABLES = "() => Array.from(document.querySelectorAll('[data-testid=stDataFrame] table'), t => t.textContent)"


def test_attack_lab_alice_share_and_download(page: Page, app_url: str, browser: Browser) -> None:
    open_page(page, f"{app_url}/Attack_lab")
    assert page.locator("h1").first.inner_text().strip() == "Attack lab"
    assert page.locator("[data-testid=stException]").count() == 0
    shown, proven, ratio = page.evaluate(METRICS)
    assert 0 < float(shown) <= float(proven) and ratio.endswith("%")
    page.screenshot(path=str(ARTIFACTS / "attack_defaults_1280.png"), full_page=True)
    page.locator(".js-plotly-plot").first.screenshot(path=str(ARTIFACTS / "attack_figure_1280.png"))

    # the worked example: a person makes the attacker stricter; the URL keeps the rule
    heading = page.get_by_text("Is Alice in the survey?", exact=True)
    heading.evaluate(TOP)
    page.screenshot(path=str(ARTIFACTS / "attack_alice_1280.png"))
    before = page.evaluate(TABLES)
    assert any("false alarm" in t for t in before) and any("attacker guesses" in t for t in before)
    text(page, "guess “in” from this many “yes”", "4", "alice_t")
    assert query(page.url)["alice_t"] == "4"
    page.wait_for_function(f"() => ({TABLES})().join() !== {before!r}.join()", timeout=TIMEOUT_MS)
    heading.evaluate(TOP)
    page.screenshot(path=str(ARTIFACTS / "attack_alice_t4_1280.png"))

    # another mechanism: the URL is the CLI's flags
    radio(page, "Mechanism", "gaussian", "mechanism")
    assert query(page.url)["mechanism"] == "gaussian"
    page.get_by_text("This attack shows ε ≥").first.wait_for(timeout=TIMEOUT_MS)
    values = {"mechanism": "gaussian", **{p.key: p.check(p.default) for p in av.ALL_PARAMS[1:]}}
    view = av.build(av.run(av.attack_of(values)))
    with page.expect_download(timeout=TIMEOUT_MS) as info:
        page.get_by_role("button", name="Download data (CSV)").first.click()
    assert Path(info.value.path()).read_bytes() == export.columns_csv(view.csv["curve"])

    # a fresh phone-width browser opening the shared link sees the same numbers
    sent = page.evaluate(METRICS)
    context = browser.new_context(viewport={"width": 390, "height": 900})
    try:
        other = context.new_page()
        open_page(other, page.url)
        assert other.evaluate(METRICS) == sent
        other.screenshot(path=str(ARTIFACTS / "attack_shared_390.png"), full_page=True)
    finally:
        context.close()


def test_a_seed_changed_in_the_lab_reaches_the_worked_example(page: Page, app_url: str) -> None:
    """The lab and the worked example are fragments (issue 20): a change of the lab's seed reruns
    both, not the page, and the example then shows what a fresh page opened on that seed shows."""
    open_page(page, f"{app_url}/Attack_lab")
    before = page.evaluate(TABLES)
    seed = int(next(p for p in av.ATTACK_PARAMS if p.key == "seed").default) + 6
    text(page, "seed", str(seed), "seed")
    page.wait_for_function(f"() => ({TABLES})().join() !== {before!r}.join()", timeout=TIMEOUT_MS)
    assert page.get_by_text(f"seed {seed})").count() == 1  # the lab's caption
    after = page.evaluate(TABLES)
    fresh = page.context.new_page()
    try:
        open_page(fresh, f"{app_url}/Attack_lab?seed={seed}")
        assert fresh.evaluate(TABLES) == after
        assert fresh.evaluate(METRICS) == page.evaluate(METRICS)
    finally:
        fresh.close()
