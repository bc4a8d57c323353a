"""What a user carries away, in a real browser (issue 10 items 1, 4, 5): the page's CSV is the
CLI's bytes and parses back, hover names the curve under the pointer with its coordinates, the
modebar's SVG export (made by plotly.js in the browser) saves the page's figure in the page's template
under a name carrying every input."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
from playwright.sync_api import Page

from dpviz import export
from tests.browser.test_app_in_browser import TIMEOUT_MS, export_figure, open_page
from tests.export.cases import values, view


def test_bounds_csv_is_the_cli_table_and_parses_back(page: Page, app_url: str):
    open_page(page, f"{app_url}/Database_priors")
    with page.expect_download() as info:
        page.get_by_role("button", name="Download the bounds (CSV)").click()
    download = info.value
    raw = Path(download.path()).read_bytes()
    built = view("priors", (("preset", "hospitals"),))
    assert raw == export.columns_csv(built.csv["bounds"])  # python -m dpviz figure priors --out x.csv
    df = pd.read_csv(io.BytesIO(raw))
    assert list(df.columns) == list(built.csv["bounds"]) and len(df) == len(built.csv["bounds"]["bound"])
    assert df["epsilon"].tolist()[0] == built.csv["bounds"]["epsilon"][0]  # ε is a number, in place
    # the name carries every input: δ0 and C too, not only the scenario, ε0, δ and k
    inputs = {"preset": "hospitals", "kind": "cap", "eps0": 0.1, "delta0": 0.0, "delta": 1e-5, "k": 1000,
              "cap": 365, "neighbouring": "unbounded"}
    assert download.suggested_filename == export.file_stem("priors", inputs) + "_bounds.csv"


HOVER_JS = """([index, trace]) => {
  // the pixel of vertex `index` of trace `trace` in the index-th plot on the page
  const gd = document.querySelectorAll('.js-plotly-plot')[index];
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  const t = gd._fullData[trace];
  // the vertex farthest from every other trace's vertices: the pointer is unambiguous there
  let best = 0, bestGap = -1;
  for (let i = 0; i < t.x.length; i++) {
    const px = xa.l2p(t.x[i]), py = ya.l2p(t.y[i]);
    let gap = Infinity;
    gd._fullData.forEach((o, j) => { if (j !== trace && o.hoverinfo !== 'skip')  // a fill answers nothing
      for (let m = 0; m < o.x.length; m++)
      gap = Math.min(gap, Math.hypot(xa.l2p(o.x[m]) - px, ya.l2p(o.y[m]) - py)); });
    if (gap > bestGap) { bestGap = gap; best = i; }
  }
  return {x: box.left + xa._offset + xa.l2p(t.x[best]), y: box.top + ya._offset + ya.l2p(t.y[best]),
          name: t.name, gap: bestGap};
}"""


def test_hover_names_the_region_under_the_pointer_and_its_coordinates(page: Page, app_url: str):
    open_page(page, f"{app_url}/Privacy_regions")
    plot = 1  # "What each composition theorem guarantees": nested filled regions
    page.locator(".js-plotly-plot").nth(plot).scroll_into_view_if_needed()
    traces = page.evaluate(f"() => document.querySelectorAll('.js-plotly-plot')[{plot}]._fullData"
                           ".map((t, i) => [i, t.name, t.mode])")
    outlines = [(i, name) for i, name, mode in traces if mode == "lines"]  # fills are traces of their own
    for trace, name in outlines[:4]:  # Basic, Advanced, KOV, Optimal
        target = page.evaluate(HOVER_JS, [plot, trace])
        page.mouse.move(target["x"] + 1, target["y"] + 1)
        label = page.locator(".hoverlayer .hovertext").first
        label.wait_for(timeout=TIMEOUT_MS)
        text = label.text_content() or ""
        assert re.sub(r"\s+", " ", name.replace("<br>", " ")) in re.sub(r"\s+", " ", text), (name, text)
        assert "P_FA =" in text and "P_MD =" in text, text
        page.mouse.move(5, 5)


def test_the_svg_export_is_the_page_figure_in_the_page_template(page: Page, app_url: str):
    open_page(page, f"{app_url}/Privacy_regions?k=8")
    download = export_figure(page, 0, "svg")  # plotly.js, in the browser: the server is not asked
    stem = export.file_stem("regions", {**values("regions"), "k": 8})
    assert download.suggested_filename == f"{stem}_single.svg"
    text = Path(download.path()).read_text()
    assert text.lstrip().startswith("<svg") and "font-family: Arial" in text and "Open Sans" not in text
    # the screen draws with the same template: the page's plot uses the same font
    family = page.evaluate("() => getComputedStyle(document.querySelector('.js-plotly-plot .gtitle'))"
                           ".fontFamily")
    assert family.startswith("Arial"), family
