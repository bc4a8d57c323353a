"""Every composition method has a style and every mechanism route a label: a key added to
``METHODS`` or to ``dpviz.mechanisms.routes.routes`` without one would show as its bare key on the
legends, tables and the CLI's help."""

from __future__ import annotations

import re

import pytest

from dpviz.cli import main
from dpviz.composition import METHODS
from dpviz.figures.mechanisms import ROUTE_KEYS, ROUTE_LABELS
from dpviz.figures.style import STYLES, style
from dpviz.mechanisms import routes as R
from dpviz.mechanisms.registry import make

PARTS = {  # together they reach every route under --compare (one part, δ > 0: buckets too)
    "gaussian": (make("gaussian", sigma=2.0, sensitivity=1.0), 3),
    "subsampled gaussian": (make("gaussian", sigma=2.0, sensitivity=1.0, sampling_rate=0.1), 3),
    "randomized response": (make("randomized-response", eps0=0.5, categories=2), 3),
}


@pytest.fixture(scope="module")
def returned() -> dict[str, list[str]]:
    """The route keys ``routes(compare=True)`` returns for each of ``PARTS``, in its order."""
    return {name: list(R.routes([part], delta=1e-5, compare=True)) for name, part in PARTS.items()}


@pytest.mark.parametrize("key", list(METHODS))
def test_every_method_has_its_own_style(key: str) -> None:
    assert key in STYLES, f"METHODS[{key!r}] has no Style in dpviz/figures/style.py"
    assert style(key).label not in ("", key)


def test_methods_of_one_figure_differ_in_colour_and_dash() -> None:
    """The curves page draws every method in one figure: greyscale needs distinct dashes."""
    dashes = [STYLES[key].dash for key in METHODS]
    assert len(set(dashes)) == len(dashes), dict(zip(METHODS, dashes, strict=True))
    colours = [s.color.upper() for s in STYLES.values()]
    assert len(set(colours)) == len(colours)
    assert all(re.fullmatch(r"#[0-9A-F]{6}", c) for c in colours)


def test_route_keys_are_the_routes_returned(returned: dict[str, list[str]]) -> None:
    assert returned["gaussian"] == list(ROUTE_KEYS)  # every route, in routes()'s order
    assert set().union(*returned.values()) == set(ROUTE_KEYS)


def test_every_returned_route_has_a_label(returned: dict[str, list[str]]) -> None:
    for name, keys in returned.items():
        missing = [key for key in keys if key not in ROUTE_LABELS]
        assert not missing, f"{name}: routes without a ROUTE_LABELS entry: {missing}"
        assert all(ROUTE_LABELS[key] not in ("", key) for key in keys)


def test_cli_help_names_every_route(capsys, returned: dict[str, list[str]]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["mechanism", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    listed = re.findall(r"^  ([a-z_]+): (.+)$", text, flags=re.MULTILINE)
    assert [key for key, _ in listed] == list(ROUTE_KEYS)
    assert set().union(*returned.values()) <= {key for key, _ in listed}
    assert all(label == ROUTE_LABELS[key] for key, label in listed)
    with pytest.raises(SystemExit):
        main(["mechanism", "gaussian", "--help"])
    compare_help = " ".join(capsys.readouterr().out.split())
    assert all(key in compare_help for key in ROUTE_KEYS)
