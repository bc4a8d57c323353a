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
