"""What a user carries away: CSV tables, JSON payloads and their file names.

One place writes every CSV (Python's ``csv`` writer: a note with a comma stays one cell)
and every JSON payload (strict JSON: no NaN or Infinity), for the pages' download buttons
and ``python -m dpviz figure --out x.csv|x.json`` alike. No Streamlit, no plotting.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dpviz.guarantee import Guarantee, finite_or_none

__all__ = ["STEM_MAX", "columns_csv", "file_stem", "payload_json"]

STEM_MAX = 150
"""Longest file stem; a longer one is cut and ends with a hash of every parameter."""


def columns_csv(columns: Mapping[str, Sequence[Any] | np.ndarray]) -> bytes:
    """CSV (RFC 4180 quoting, ``\\r\\n`` rows as the ``csv`` module writes them) of equal-length
    columns: a header of the column names, then one row per index. Numbers keep full precision
    (``repr``); NaN, ±inf and ``None`` are written as empty cells (no value)."""
    names = list(columns)
    values = [np.asarray(columns[n], dtype=object).ravel() for n in names]
    lengths = {len(v) for v in values}
    if len(lengths) > 1:
        sizes = ", ".join(f"{n}: {len(v)}" for n, v in zip(names, values, strict=True))
        raise ValueError(f"CSV columns must have equal lengths ({sizes})")
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_MINIMAL)
    writer.writerow(names)
    writer.writerows([_csv_cell(v) for v in row] for row in zip(*values, strict=True))
    return buf.getvalue().encode("utf-8")


def _csv_cell(v: Any) -> str:
    """One cell: full-precision numbers, empty for no value."""
    if v is None:
        return ""
    if isinstance(v, bool | np.bool_):
        return str(bool(v))
    if isinstance(v, float | np.floating):
        return repr(float(v)) if math.isfinite(v) else ""
    if isinstance(v, int | np.integer):
        return str(int(v))
    return str(v)


def payload_json(payload: Mapping[str, Any]) -> str:
    """Strict JSON (indented) of a view's payload: numpy values become plain numbers and lists,
    non-finite numbers become ``null`` (no value), guarantees their ``to_json()``."""
    return json.dumps(_jsonable(payload), indent=2, allow_nan=False, ensure_ascii=False)


def _jsonable(obj: Any) -> Any:
    """``obj`` with every value JSON can hold exactly (strict: NaN and ±inf become ``None``)."""
    if obj is None or isinstance(obj, str | bool):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return finite_or_none(float(obj))
    if isinstance(obj, Guarantee):
        return _jsonable(obj.to_json())
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return [_jsonable(v) for v in obj.tolist()] if obj.ndim else _jsonable(obj.item())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _jsonable(dataclasses.asdict(obj))
    if isinstance(obj, Sequence | set | frozenset):
        return [_jsonable(v) for v in obj]
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_stem(view_name: str, values: Mapping[str, Any]) -> str:
    """A file name without extension that carries every input: ``dpviz_<view>_<key-value>_…``
    in sorted key order, only ``[A-Za-z0-9._-]``. Deterministic; different inputs give different
    stems (a stem that had to be shortened or made safe ends with a hash of the full text)."""
    full = "_".join([f"dpviz_{view_name}", *(f"{k}-{_token(values[k])}" for k in sorted(values))])
    safe = _SAFE.sub("_", full).strip("._-") or "dpviz"
    if safe == full and len(safe) <= STEM_MAX:
        return safe
    digest = hashlib.sha256(full.encode("utf-8")).hexdigest()[:10]
    return f"{safe[:STEM_MAX - len(digest) - 1].rstrip('._-')}_{digest}"


def _token(v: Any) -> str:
    """A parameter value as text: shortest round-trip floats, ``none`` for no value."""
    if v is None:
        return "none"
    if isinstance(v, bool | np.bool_):
        return "true" if v else "false"
    if isinstance(v, int | np.integer):
        return str(int(v))
    if isinstance(v, float | np.floating):
        return repr(float(v))
    if isinstance(v, str):
        return v
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return "~".join(_token(x) for x in dataclasses.asdict(v).values())
    if isinstance(v, Mapping):
        return "~".join(f"{k}~{_token(v[k])}" for k in sorted(v))
    if isinstance(v, Sequence | np.ndarray):
        return "+".join(_token(x) for x in v)
    return str(v)
