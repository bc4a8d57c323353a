"""Every CSV and JSON a user downloads parses back to the same table and data (issue 10 item 1):
a note with a comma stays one cell, numbers keep full precision, no NaN/Infinity in JSON."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpviz import export
from dpviz.guarantee import Guarantee
from tests.export.cases import CASES, case_id, view


def _number(v: Any) -> bool:
    return isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool | np.bool_)


def _expected_cell(v: Any) -> str | float | None:
    """What a cell must read back as: a float (exactly), None (no value) or the text."""
    if v is None:
        return None
    if _number(v):
        return float(v) if math.isfinite(float(v)) else None
    return str(v)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_every_csv_parses_back_to_the_same_table(case):
    tables = view(*case).csv
    assert tables, "every view offers at least one table"
    for columns in tables.values():
        _check_round_trip(columns)


def _check_round_trip(columns) -> None:
    names = list(columns)
    data = {n: list(np.asarray(columns[n], dtype=object).ravel()) for n in names}
    n_rows = len(data[names[0]])
    raw = export.columns_csv(columns)

    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
    assert rows[0] == names
    assert len(rows) == n_rows + 1
    assert {len(r) for r in rows} == {len(names)}, "a row has more or fewer fields than the header"
    for j, name in enumerate(names):
        for i, v in enumerate(data[name]):
            want, cell = _expected_cell(v), rows[i + 1][j]
            if want is None:
                assert cell == "", (name, i, cell)
            elif isinstance(want, float):
                assert float(cell) == want, (name, i, cell, want)  # full precision, never rounded
            else:
                assert cell == want, (name, i)

    df = pd.read_csv(io.BytesIO(raw))
    assert list(df.columns) == names and df.shape == (n_rows, len(names))
    for name in names:
        want = [_expected_cell(v) for v in data[name]]
        got = df[name].tolist()
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            if w is None:
                assert g is None or (isinstance(g, float) and math.isnan(g)), (name, i, g)
            elif isinstance(w, float):
                assert float(g) == w, (name, i, g, w)
            else:
                assert str(g) == w, (name, i, g, w)


def _reject_constant(name: str) -> None:
    raise AssertionError(f"non-standard JSON constant {name}")


def _same(original: Any, parsed: Any, path: str = "$") -> None:
    """``parsed`` is ``original`` read back: numbers exact, non-finite as null, arrays as lists."""
    if isinstance(original, Guarantee):
        original = original.to_json()
    if original is None:
        assert parsed is None, path
    elif isinstance(original, bool | np.bool_):
        assert parsed is bool(original), path
    elif _number(original):
        x = float(original)
        if math.isfinite(x):
            assert isinstance(parsed, int | float) and not isinstance(parsed, bool), path
            assert parsed == original, (path, parsed, original)
        else:
            assert parsed is None, path
    elif isinstance(original, str):
        assert parsed == original, path
    elif isinstance(original, Mapping):
        assert isinstance(parsed, dict) and list(parsed) == [str(k) for k in original], path
        for k, v in original.items():
            _same(v, parsed[str(k)], f"{path}.{k}")
    elif isinstance(original, np.ndarray | list | tuple):
        items = original.tolist() if isinstance(original, np.ndarray) else list(original)
        assert isinstance(parsed, list) and len(parsed) == len(items), path
        for i, (a, b) in enumerate(zip(items, parsed, strict=True)):
            _same(a, b, f"{path}[{i}]")
    else:
        raise AssertionError(f"{path}: unexpected {type(original).__name__} in a payload")


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_json_payload_parses_back_strictly(case):
    payload = view(*case).payload
    text = export.payload_json(payload)
    parsed = json.loads(text, parse_constant=_reject_constant)
    _same(payload, parsed)


def test_a_comma_in_a_note_stays_in_its_cell():
    note = 'Classic composition, no prior ("exact")'
    raw = export.columns_csv({"bound": ["Classic"], "epsilon": [1.0000000000000002], "note": [note]})
    assert list(csv.reader(io.StringIO(raw.decode(), newline=""))) == [
        ["bound", "epsilon", "note"], ["Classic", "1.0000000000000002", note]]


def test_no_value_is_an_empty_cell_and_null():
    raw = export.columns_csv({"x": np.array([1.0, np.nan, np.inf, -np.inf]), "y": [None, 2, 3, 4]})
    assert raw.decode().splitlines() == ["x,y", "1.0,", ",2", ",3", ",4"]
    assert json.loads(export.payload_json({"a": np.array([np.nan, 1.5]), "b": float("inf")})) == {
        "a": [None, 1.5], "b": None}


def test_unequal_columns_are_refused():
    with pytest.raises(ValueError, match="equal lengths"):
        export.columns_csv({"a": [1, 2], "b": [1]})


def test_the_download_buttons_hand_over_these_bytes(monkeypatch):
    from dpviz import ui

    handed: list[Any] = []
    monkeypatch.setattr(ui.output.st, "download_button", lambda label, data, **kw: handed.append(data))
    v = view("priors", (("preset", "hospitals"),))
    ui.download_csv(v.csv["bounds"], filename="b.csv", key="k1")
    ui.download_json(v.payload, filename="b.json", key="k2")
    # the bytes are made when the button is clicked: the button holds the function that makes them
    assert [data() for data in handed] == [export.columns_csv(v.csv["bounds"]),
                                           export.payload_json(v.payload).encode("utf-8")]
