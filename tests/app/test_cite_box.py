"""The "Cite" box: closed, it sends no BibTeX (a closed box's highlighted code cost each page load
0.26 s of the browser's script time); opened, it shows the view's BibTeX; its download is there either way."""

from __future__ import annotations

import pytest

from dpviz import references
from tests.app.helpers import assert_clean, run_page


@pytest.mark.parametrize(("path", "view"), [("pages/1_Privacy_regions.py", "regions"),
                                            ("pages/6_Attack_lab.py", "attack")])
def test_bibtex_is_drawn_when_the_box_is_opened(path: str, view: str) -> None:
    at = run_page(path)
    assert_clean(at)
    assert "Cite" in [e.label for e in at.expander]
    assert not at.code
    at.session_state[f"cite_{view}_open"] = True  # what a click on the box sets
    at.run()
    assert_clean(at)
    assert [c.value for c in at.code] == [references.bibtex(view).rstrip("\n")]
    assert [b.proto.label for b in at.get("download_button")].count("BibTeX") == 1
