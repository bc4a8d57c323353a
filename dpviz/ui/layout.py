"""The frame of every page: tab title and icon, the sidebar navigation, the toolbar that shows a
running script (with Stop), and the browser-side figure exports."""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

FAVICON = Path(__file__).resolve().parents[2] / "static" / "favicon.png"
"""The tab icon, served by this server: a ``:material/…:`` page icon makes every visitor's
browser fetch an SVG from fonts.gstatic.com (the icons inside the page come from a bundled font)."""

VIEWS: tuple[tuple[str, str, str], ...] = (
    ("app.py", "Home", ":material/home:"),
    ("pages/1_Privacy_regions.py", "Privacy regions", ":material/square:"),
    ("pages/2_Composition_curves.py", "Composition curves", ":material/show_chart:"),
    ("pages/3_Database_priors.py", "Database priors", ":material/database:"),
    ("pages/4_Mechanisms.py", "Mechanisms", ":material/tune:"),
    ("pages/5_Plan_a_budget.py", "Plan a budget", ":material/calculate:"),
    ("pages/6_Attack_lab.py", "Attack lab", ":material/target:"),
)
"""Every view (file, title, icon), in sidebar order: the one list the navigation is drawn from."""

ABOUT = ("**dpviz**: how differential privacy degrades under composition. Every number names its "
         "source (seed paper and theorem); every input is in the address bar.")
"""The toolbar's one menu item. ``toolbarMode = "minimal"`` (.streamlit/config.toml) hides the
toolbar, and with it the running indicator and its Stop button, unless the page sets a menu item:
with this one the toolbar shows "running" and Stop during a run, and nothing for developers."""


def page_setup(title: str) -> None:
    """Wide layout, the browser tab's title, the toolbar (running indicator and Stop), the sidebar
    navigation (Streamlit's automatic list is off in .streamlit/config.toml: it would label the
    home page after its file, "app") and the figures' SVG export button."""
    st.set_page_config(page_title=f"{title} — dpviz", page_icon=str(FAVICON), layout="wide",
                       menu_items={"About": ABOUT})
    st.html(NARROW_SCREEN_CSS + f"<script>{SVG_EXPORT_JS}</script>", unsafe_allow_javascript=True)
    with st.sidebar:
        st.markdown("**dpviz**")
        for page, label, icon in VIEWS:
            page_link(page, label=label, icon=icon)


NARROW_SCREEN_CSS = """<style>
@media (max-width: 640px) {
  /* A touch screen always shows Plotly's modebar, over the figure's title. A title wrapped for a
     1000 px figure is set smaller to fit a phone. */
  [data-testid="stPlotlyChart"] .modebar-container { display: none; }
  [data-testid="stPlotlyChart"] .gtitle { font-size: 13px !important; }
}
</style>"""
"""Screen-only rules for phones (exports never see page CSS: plotly.js renders the figure itself)."""

SVG_LABEL = "Download plot as SVG"
"""The modebar button beside the camera (PNG, 3×, ``dpviz.figures.style.export_config``)."""

SVG_EXPORT_JS = """
(() => {
  // An SVG button in every figure's modebar: it runs the camera button's own export (plotly.js
  // toImage, in the browser, in the figure's template) with the format set to SVG for that click.
  if (window.dpvizSvgExport) return;
  window.dpvizSvgExport = true;
  const add = () => document.querySelectorAll('.js-plotly-plot').forEach((gd) => {
    const camera = gd.querySelector('.modebar-btn[data-title^="Download plot"]:not([data-dpviz-svg])');
    // a half-width figure (two side by side) keeps the camera alone: one more button made the
    // modebar cover its title (tests/browser/test_layout.py)
    if (!camera || gd.clientWidth < NARROWEST) return;
    if (gd.querySelector('.modebar-btn[data-dpviz-svg]')) return;
    const button = document.createElement('a');
    button.className = 'modebar-btn';
    button.setAttribute('rel', 'tooltip');
    button.setAttribute('role', 'button');
    button.setAttribute('data-dpviz-svg', '');
    button.setAttribute('data-title', 'LABEL');
    button.setAttribute('aria-label', 'LABEL');
    button.textContent = 'SVG';  // text, not markup: Streamlit's sanitizer drops a script holding tags
    Object.assign(button.style, {fontSize: '11px', fontWeight: '700', fontFamily: 'Arial, sans-serif',
                                 color: 'rgba(68, 68, 68, 0.5)', lineHeight: '20px'});
    button.addEventListener('click', (event) => {
      event.preventDefault();
      const options = gd._context.toImageButtonOptions;
      const format = options.format;
      options.format = 'svg';  // read at once by the camera's click handler
      try { camera.click(); } finally { options.format = format; }
    });
    camera.parentNode.insertBefore(button, camera.nextSibling);
  });
  let queued = false;
  new MutationObserver(() => {
    if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; add(); }); }
  }).observe(document.body, {childList: true, subtree: true});
  add();
})();
""".replace("LABEL", SVG_LABEL).replace("NARROWEST", "700")
"""Installed once per browser tab by ``page_setup``; a redrawn modebar gets its button again."""


def page_link(page: str, *, label: str, icon: str) -> None:
    """A link to another view; plain text where the page runs on its own (AppTest, no navigation)."""
    try:
        st.page_link(page, label=label, icon=icon)
    except StreamlitPageNotFoundError:
        st.markdown(f"**{label}**")
