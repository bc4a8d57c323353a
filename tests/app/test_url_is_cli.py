"""One parameter path: a page's URL query, read as ``python -m dpviz figure VIEW`` flags (each key
``k`` as ``--k``), gives the view the page shows — the same tables, cell for cell. (It found the
Composition curves page naming KOV's heterogeneous row "Thm 3.4" where the view says Thm 3.5.)"""

from __future__ import annotations

import pytest

from dpviz import budget as budgets
from dpviz.cli import build_parser
from dpviz.cli.flags import values_from_args
from dpviz.ui import table_frame
from dpviz.views.catalog import registry
from dpviz.views.database_priors import LEVELS, heterogeneous_rows
from tests.app.helpers import assert_clean, errors, run_page, tables

CASES = [  # (page, view, its URL query, the view's tables in page order)
    ("pages/2_Composition_curves.py", "curves",
     {"eps0": "0.2", "delta0": "1e-07", "delta": "1e-06", "k_max": "300", "k": "40",
      "levels": "0.2:0:5,1.0:1e-07:2", "hdelta": "0.001"}, ("at_k", "heterogeneous")),
    ("pages/3_Database_priors.py", "priors",
     {"preset": "Subsidiaries", "eps0": "0.3", "delta": "1e-06", "k": "50", "cap": "2",
      "neighbouring": "bounded"}, ("bounds", "capped_levels")),
    ("pages/3_Database_priors.py", "priors",
     {"preset": "In at least k' databases", "k": "30", "k2": "4", "delta0": "1e-6"}, ("bounds",)),
    ("pages/3_Database_priors.py", "priors",
     {"preset": "Custom", "kind": "free vs paid feature columns", "common": "2", "free_only": "4",
      "paid_only": "1", "eps0": "0.5"}, ("bounds",)),
]


@pytest.mark.parametrize(("path", "view", "query", "names"), CASES,
                         ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_the_url_read_as_cli_flags_builds_the_view_the_page_shows(path, view, query, names) -> None:
    at = run_page(path, **query)
    assert_clean(at)
    assert not errors(at), errors(at)
    spec = registry()[view]
    flags = [s for key, value in query.items() for s in (f"--{key}", value)]
    argv = ["figure", view, *flags, "--out", "x.json"]
    values = values_from_args(build_parser().parse_args(argv), spec.params)
    built = spec.build(**values, budget=budgets.PAGE)
    shown = tables(at)
    assert len(shown) == len(names)
    for frame, name in zip(shown, names, strict=True):
        assert frame.to_csv() == table_frame(_table(built, name, values)).to_csv(), name


def _table(built, name: str, values: dict) -> list:
    """A view's table; a cap scenario's heterogeneous-releases table (HBW Thm 2 with a different
    (ε_i, δ_i) per database, the page's section below the view) from the same core function, at the
    page's default levels and the URL's cap, neighbouring relation and δ."""
    if name != "capped_levels":
        return built.tables[name]
    return heterogeneous_rows(LEVELS.check(LEVELS.default), cap=int(values["cap"]),
                              neighbouring=values["neighbouring"], delta=values["delta"])
