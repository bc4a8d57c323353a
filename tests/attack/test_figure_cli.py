"""``python -m dpviz figure attack … --out x.json`` is the page's JSON download: the attack view is in
``dpviz.views.catalog.registry()``, its flags are the page's URL keys, and the file parses back equal to what
the page's button gives (``export.payload_json`` of ``av.build`` of the page's run) — up to the
measured times, which are never equal between two runs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dpviz import export
from dpviz.cli import main
from dpviz.views import attack as av
from dpviz.views.catalog import registry

CASES = [
    {"mechanism": "canonical", "eps0": "0.5", "k": "10", "trials": "20000", "seed": "3", "delta": "1e-3"},
    {"mechanism": "gaussian", "sigma": "2", "k": "4", "trials": "5000", "seed": "7", "delta": "0.01"},
    {"mechanism": "randomized-response", "eps0": "0.3", "categories": "3", "k": "20", "trials": "3000",
     "seed": "1", "delta": "1e-4", "confidence": "0.9"},
]


def untimed(x: Any) -> Any:
    """The payload without its measured ``seconds`` (at any depth)."""
    if isinstance(x, dict):
        return {k: untimed(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list):
        return [untimed(v) for v in x]
    return x


def page_download(query: dict[str, str]) -> bytes:
    """The bytes of the page's JSON button for this URL query (pages/6_Attack_lab.py: the checked
    values → ``attack_of`` → ``run`` → ``build`` → ``download_json``)."""
    spec = registry()["attack"]
    values = spec.defaults()
    values.update({p.key: p.check(query[p.key]) for p in spec.params if p.key in query})
    return export.payload_json(av.build(av.run(av.attack_of(values))).payload).encode("utf-8")


def test_the_attack_view_is_registered_with_the_page_keys() -> None:
    spec = registry()["attack"]
    assert spec.params == av.ALL_PARAMS
    assert {"mechanism", "k", "trials", "seed", "delta", "confidence", "sampling_rate", "prior",
            "eps0", "sigma"} <= {p.key for p in spec.params}


@pytest.mark.parametrize("query", CASES, ids=[c["mechanism"] for c in CASES])
def test_cli_json_parses_back_equal_to_the_page_download(query, tmp_path, capsys) -> None:
    out = tmp_path / "x.json"
    flags = [s for key, value in query.items() for s in (f"--{key}", value)]
    assert main(["figure", "attack", *flags, "--out", str(out)]) == 0
    answer = json.loads(capsys.readouterr().out)
    cli = json.loads(out.read_text(encoding="utf-8"))
    page = json.loads(page_download(query))
    assert cli["view"] == "attack" and cli["trials"] == int(query["trials"])
    assert untimed(cli) == untimed(page)
    assert answer["parameters"] == page["parameters"]
    assert "seconds" in cli and cli["empirical_epsilon"] > 0


def test_another_seed_is_another_download(tmp_path) -> None:
    """The comparison can fail: a different seed changes the trials and so the file."""
    query = dict(CASES[0])
    out = tmp_path / "x.json"
    flags = [s for key, value in query.items() for s in (f"--{key}", value)]
    assert main(["figure", "attack", *flags, "--out", str(out)]) == 0
    other = json.loads(page_download({**query, "seed": "4"}))
    assert untimed(json.loads(out.read_text(encoding="utf-8"))) != untimed(other)


def test_bad_trials_exit_2_with_one_line(tmp_path, capsys) -> None:
    assert main(["figure", "attack", "--trials", "10", "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "trials" in err and "10,000,000" in err
