"""AppTest for the nested regions on pages/1_Privacy_regions.py (KOV Fig. 2; issue 10 item 6)."""

from __future__ import annotations

import base64

import numpy as np

from dpviz.views.regions import SPEC
from tests.app.helpers import assert_clean, errors, figures, run_page


def _nested(at) -> dict:
    return next(f for f in figures(at) if "nested" in f["layout"]["title"]["text"])


def _ks(fig: dict) -> list[str]:
    """The nested regions' names, one per outline (a region's fill is a trace of its own)."""
    return [t["name"] for t in fig["data"]
            if t.get("name", "").startswith("k = ") and t.get("mode") == "lines"]


def test_default_page_draws_the_nested_regions() -> None:
    at = run_page("pages/1_Privacy_regions.py")
    assert_clean(at)
    assert len(figures(at)) == 3
    assert _ks(_nested(at)) == [
        "k = 100", "k = 30", "k = 10", "k = 3", "k = 1"]


def test_any_k_typed_is_drawn() -> None:
    at = run_page("pages/1_Privacy_regions.py", ks="37, 2 ,500")
    assert_clean(at)
    assert _ks(_nested(at)) == ["k = 500", "k = 37", "k = 2"]
    at.text_input(key="ks").set_value("7").run()
    assert _ks(_nested(at)) == ["k = 7"]


def test_bad_overlay_names_the_field_and_falls_back() -> None:
    at = run_page("pages/1_Privacy_regions.py", ks="1,2,3,4,5,6,7,8,9")
    assert_clean(at)
    assert any(m.startswith("k values overlaid (nested regions) must be") for m in errors(at)), errors(at)
    assert len(_ks(_nested(at))) == 5


def _values(data: object) -> np.ndarray:
    """A trace's coordinates: a list, or Plotly's typed array {"dtype", "bdata" (base64)}."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"])).astype(float)
    return np.asarray(data, dtype=float)


def test_methods_figure_draws_the_exported_vertices() -> None:
    """The outlines on "What each composition theorem guarantees" are the lower-boundary vertices of
    the JSON download (and of ``figure regions --out x.json``) and their mirror images; the
    how-to-read text says the slack regions are the theorems' own within 1e-4."""
    at = run_page("pages/1_Privacy_regions.py")
    assert_clean(at)
    fig = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Regions proved"))
    payload = SPEC.build(eps0=0.1, delta0=0.001, k=30).payload
    outlines = {t["name"]: t for t in fig["data"] if t.get("mode") == "lines"}
    for m, label in payload["legend"].items():
        v = payload["lower_boundary_vertices"][m]
        n = len(v["P_FA"])
        t = outlines[label]
        np.testing.assert_array_equal(_values(t["x"])[:n], v["P_FA"])
        np.testing.assert_array_equal(_values(t["y"])[:n], v["P_MD"])
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "within 1e-4 in P_FA at every P_MD" in text and "zCDP" in text
