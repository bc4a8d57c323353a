"""The Plan a budget page in a real browser (issue 9): a person changes k, the URL keeps it, a fresh
browser opening that URL sees the same tables, the CSV download is the CLI's bytes, the SVG button
saves the figure; screenshots at 1280 and 390 px."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
from playwright.sync_api import Browser, Page

from dpviz import export
from dpviz.views import planner as pv
from tests.browser.conftest import ARTIFACTS
from tests.browser.test_app_in_browser import TIMEOUT_MS, export_figure, open_page
from tests.browser.test_share_links import query, text

TABLE_TEXT = "() => Array.from(document.querySelectorAll('[data-testid=stDataFrame]'), t => t.innerText)"


def test_main_path_share_and_exports(page: Page, app_url: str, browser: Browser) -> None:
    open_page(page, f"{app_url}/Plan_a_budget")
    assert page.locator("h1").first.inner_text().strip() == "Plan a budget"
    page.screenshot(path=str(ARTIFACTS / "planner_defaults_1280.png"), full_page=True)
    plot = page.locator(".js-plotly-plot").first
    plot.scroll_into_view_if_needed()
    plot.screenshot(path=str(ARTIFACTS / "planner_noise_vs_k_1280.png"))
    page.get_by_text("Smallest noise for k = 100 releases").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "planner_noise_table_1280.png"))
    text(page, "k (releases)", "50", "k")
    assert query(page.url)["k"] == "50"
    page.get_by_text("Largest ε0 per release for k = 50").wait_for(timeout=TIMEOUT_MS)
    # the CSV a person downloads is the bytes `python -m dpviz figure planner --k 50 --out x.csv` writes
    with page.expect_download(timeout=TIMEOUT_MS) as info:
        page.get_by_role("button", name="Download largest ε0 per method (CSV)").click()
    raw = Path(info.value.path()).read_bytes()
    values = {**pv.SPEC.defaults(), "k": 50}
    built = pv.build(**values)
    assert raw == export.columns_csv(built.csv["eps0"])
    df = pd.read_csv(io.BytesIO(raw))
    assert df["eps0"][0] == 1.0 / 50 and (df["total_epsilon"] <= 1.0).all()
    assert info.value.suggested_filename == export.file_stem("planner", values) + "_eps0.csv"
    svg = export_figure(page, 0, "svg")
    assert Path(svg.path()).read_text().lstrip().startswith("<svg")
    # a fresh browser opening the shared URL sees the same tables
    sent = page.evaluate(TABLE_TEXT)
    context = browser.new_context(viewport={"width": 390, "height": 900})
    try:
        other = context.new_page()
        open_page(other, page.url)
        assert other.evaluate(TABLE_TEXT) == sent
        other.screenshot(path=str(ARTIFACTS / "planner_shared_390.png"), full_page=True)
    finally:
        context.close()


def _payload(page: Page) -> dict:
    with page.expect_download(timeout=TIMEOUT_MS) as info:
        page.get_by_role("button", name="JSON").first.click()
    return json.loads(Path(info.value.path()).read_text())


def test_prior_typed_goes_to_the_url_and_a_shared_link_shows_its_rows(page: Page, app_url: str,
                                                                    browser: Browser) -> None:
    """A person types the gce command's --prior value; the URL holds it (key = flag) and the priors
    rows are that prior's bounds; over the page's budget the rows say why (tables are drawn on a
    canvas: read through the JSON download)."""
    open_page(page, f"{app_url}/Plan_a_budget?k=50")
    text(page, pv.PRIOR.label, "at-least:5", "prior")
    assert query(page.url)["prior"] == "at-least:5"
    heading = page.get_by_text("Database priors: prior at-least:5 over the k = 50 databases")
    heading.wait_for(timeout=TIMEOUT_MS)
    heading.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "planner_prior_1280.png"))
    payload = _payload(page)
    assert payload["parameters"]["prior"] == "at-least:5" and list(payload["gce"]) == ["classic", "exact"]
    assert payload["gce"]["exact"]["eps0"] > payload["gce"]["classic"]["eps0"]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        other = context.new_page()
        open_page(other, f"{app_url}/Plan_a_budget?k=1000000&prior=uniform-nonzero&k_max=10")
        over = other.get_by_text("Database priors: prior uniform-nonzero")
        over.wait_for(timeout=TIMEOUT_MS)
        over.scroll_into_view_if_needed()
        other.screenshot(path=str(ARTIFACTS / "planner_prior_over_budget_1280.png"))
        rows = _payload(other)["gce"]
        assert "theorem3_optimal" in rows
        # the closed forms answer at any k; the exact worst case and Thm 3 with the optimum are over
        # the page's budget and say so
        assert rows["classic"]["eps0"] > 0 and rows["theorem3_advanced"]["eps0"] > 0, rows
        for key in ("exact", "theorem3_optimal"):
            assert rows[key]["eps0"] is None and "budget" in rows[key]["reason"], rows[key]
        assert all(r["eps0"] is not None or "budget" in r["reason"] for r in rows.values()), rows
    finally:
        context.close()
