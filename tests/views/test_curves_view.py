"""The composition-curves view at the edges of its inputs."""

from __future__ import annotations

import warnings

from dpviz.views.curves import SPEC


def test_target_delta_zero_builds_without_warnings() -> None:
    """δ = 0 is a valid target (pure DP); a log δ axis has no place for its line, so none is drawn
    (log10(0) used to warn, which the CLI fuzz counts as a failure)."""
    values = {**SPEC.defaults(), "delta": 0.0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        view = SPEC.build(**values)
    fig = view.figures["delta_vs_epsilon"]
    assert not any("target δ" in (a.text or "") for a in fig.layout.annotations)
    values["delta"] = 1e-5
    marked = SPEC.build(**values).figures["delta_vs_epsilon"]
    assert any("target δ = 1e-05" in (a.text or "") for a in marked.layout.annotations)


def test_heterogeneous_row_names_the_theorem_it_cites() -> None:
    """The mixed-levels KOV row is Thm 3.5 in its name and in its source (it said 3.4 beside 3.5)."""
    rows = SPEC.build(**SPEC.defaults()).tables["heterogeneous"]
    kov = next(r for r in rows if r["method"].startswith("KOV"))
    assert kov["method"] == "KOV Thm 3.5" and "3.5" in kov["source / note"]
    homogeneous = SPEC.build(**SPEC.defaults()).tables["at_k"]
    assert next(r for r in homogeneous if r["method"].startswith("KOV"))["method"] == "KOV Thm 3.4"
