"""A lecture without a server (issue 20): ``dpviz figure regions … --out lecture.html`` opened from
disk in a real browser with networking off. The slider moves the figure to the frame's k (the
data of the page's figure at that k, its title and legend name), hover keeps the coordinates, and
no request leaves the file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Browser

from dpviz.cli import main
from dpviz.views.regions import at_k
from tests.browser.conftest import ARTIFACTS

EPS0, DELTA0, K = 0.5, 0.001, 8
MOVE_TO = 3
"""The slider step the test moves to (k = 3: a title, a legend name and a region all its own)."""
OPTIMAL = 3
"""The index of the optimal region's outline in the "single" figure (two fills, then the outlines)."""

CLICK_STEP_JS = """(label) => {
  // the pixel of the slider step labelled `label`, on the slider's rail
  const text = [...document.querySelectorAll('.slider-label')].find(t => t.textContent === label);
  const rail = document.querySelector('.slider-rail-touch-rect').getBoundingClientRect();
  const box = text.getBoundingClientRect();
  return {x: box.left + box.width / 2, y: rail.top + rail.height / 2};
}"""


@pytest.fixture(scope="module")
def lecture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lecture") / "lecture.html"
    assert main(["figure", "regions", "--eps0", str(EPS0), "--delta0", str(DELTA0), "--k", str(K),
                 "--out", str(out)]) == 0
    return out


def test_the_slider_plays_each_k_offline_and_nothing_leaves_the_file(browser: Browser, lecture: Path):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_offline(True)
    requests: list[str] = []

    def refuse(route) -> None:  # every request but the file itself is recorded and aborted
        if not route.request.url.startswith("file://"):
            requests.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    context.route("**/*", refuse)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(lecture.as_uri())
    page.wait_for_selector(".slider-rail-touch-rect")
    gd = "document.getElementById('lecture')"
    title = page.evaluate(f"{gd}.layout.title.text")
    assert title.startswith(f"R({EPS0:g}, {DELTA0:g}) and the optimal {K}-fold")
    assert "P_FA = %{x" in page.evaluate(f"{gd}.data[{OPTIMAL}].hovertemplate")  # hover keeps coordinates

    point = page.evaluate(CLICK_STEP_JS, str(MOVE_TO))
    page.mouse.click(point["x"], point["y"])
    page.wait_for_function(f"{gd}.layout.title.text.includes('optimal {MOVE_TO}-fold')")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "lecture_regions_k3.png"))

    # the plotted data is the page's own figure at k = 3 (regions.at_k, as the page computes it)
    want = at_k(eps0=EPS0, delta0=DELTA0, k=MOVE_TO).figures["single"].data[OPTIMAL]
    trace = f"{gd}._fullData[{OPTIMAL}]"  # as drawn: arrays decoded
    shown = page.evaluate(f"[Array.from({trace}.x), Array.from({trace}.y), {trace}.name]")
    assert shown[2] == want.name and f"{MOVE_TO}-fold" in shown[2]
    np.testing.assert_allclose(shown[0], want.x, rtol=1e-12)
    np.testing.assert_allclose(shown[1], want.y, rtol=1e-12)
    assert page.evaluate(f"{gd}.layout.sliders[0].active") == page.evaluate(
        f"{gd}.layout.sliders[0].steps.findIndex(s => s.label === '{MOVE_TO}')")
    assert requests == [] and errors == []
    context.close()
