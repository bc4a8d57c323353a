"""Random walks of widget changes, as a person clicking around makes them (issue 14's "nothing
crashes in front of a user", for valid combinations; ``test_url_fuzz`` feeds malformed values).

Each step changes one input of the page: a radio to another option, a toggle flipped, a text input
to a nearby value (×2, ÷2, ±1, one number of a list or prior scaled) or back to its default, now and
then to an extreme one (10⁻¹²…10⁷, the value ×10³ or ÷10³: the ends of the valid ranges a ×2 walk
takes long to reach), or a data editor's cell edited, a row added or deleted. After every step: no
exception box, and every error box is a deliberate notice (``dpviz.ui.notice_text``) naming a field
the person can see (an input's label, a table's column or a key typed in a cell), and no route's
note says its computation failed. Under the suite's warnings-as-errors a numerical warning inside a
run (an invalid cast, a log of a negative number) is an exception box too. A text change starts from
the field's last accepted value, as a person corrects a value the page refused.

A seeded generator keeps CI runs reproducible (two walks of 8 changes per page, about 20 s); longer:
``DPVIZ_WALK_STEPS=300 DPVIZ_WALK_SEEDS=1,2,3 pytest tests/app/test_valid_walks.py -s``, with
``DPVIZ_WALK_EXTREME=0.5`` for more extreme values and ``DPVIZ_WALK_KEEP_GOING=1`` to go on after a
failure in a new session and report them all. A failure prints the seed, the path walked and the
page's inputs as a URL query: ``tests.app.helpers.run_page(page, **query)`` opens the same state
(the path replays it in one session: ``Walk(page, seed)`` takes the same steps).

Below the walk, what the walks found, pinned (each test failed before its fix).
"""

from __future__ import annotations

import os
import random
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.helpers import errors, run_page, tables

STEPS = int(os.environ.get("DPVIZ_WALK_STEPS", "8"))
"""Changes per walk; each is one rerun of the page."""
SEEDS = tuple(int(s) for s in os.environ.get("DPVIZ_WALK_SEEDS", "1,2").split(","))
KEEP_GOING = os.environ.get("DPVIZ_WALK_KEEP_GOING") == "1"
EXTREME = float(os.environ.get("DPVIZ_WALK_EXTREME", "0.2"))
"""Probability that a text change jumps to an extreme value instead of a nearby one."""

PAGES = ("pages/1_Privacy_regions.py", "pages/2_Composition_curves.py", "pages/3_Database_priors.py",
         "pages/4_Mechanisms.py", "pages/5_Plan_a_budget.py", "pages/6_Attack_lab.py")

EXTREMES = ("1e-12", "1e-9", "1e-6", "0.001", "0", "1", "0.5", "0.999", "0.999999", "2", "10", "20", "50",
            "100", "1000", "10000", "100000", "1000000", "10000000")
"""Values at or near the ends of the fields' ranges (a field for which one is invalid says so)."""

ENGINE_FAILURE = "the computation failed here"
"""A route's note when its numerics raised (``dpviz.views.mechanism_routes._guarded``): shown, not a
crash, yet an engine error on a valid input."""
NOTICE = re.compile(r"(?P<field>.+?) must be (?P<allowed>.+), got (?P<value>.+)", re.S)
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d*)?(?:e-?\d+)?")


def scaled(text: str, rng: random.Random) -> str:
    """A nearby value: a number ×2, ÷2, +1 or −1 (whole numbers kept whole); in a list or a prior
    (``1,3,10``, ``at-least:3``, ``1:0.5, 2-4:0.5``) one of its numbers so moved."""
    found = list(NUMBER.finditer(text))
    if not found:
        return text
    m = rng.choice(found)
    x = float(m.group())
    move = rng.choice(("×2", "÷2", "+1", "-1"))
    y = {"×2": x * 2, "÷2": x / 2, "+1": x + 1, "-1": x - 1}[move]
    whole = re.fullmatch(r"-?\d+", m.group()) is not None
    new = str(round(y)) if whole else f"{y:.6g}"
    return text[:m.start()] + new + text[m.end():]


def extreme(text: str, rng: random.Random) -> str:
    """An extreme value: one of ``EXTREMES``, or the value's numbers ×10³ or ÷10³."""
    if NUMBER.search(text) and rng.random() < 0.3:
        factor = rng.choice((1e3, 1e-3))
        whole = re.fullmatch(r"\d+", text.strip()) is not None
        return NUMBER.sub(lambda m: str(max(1, round(float(m.group()) * factor))) if whole
                          else f"{float(m.group()) * factor:.6g}", text)
    return rng.choice(EXTREMES)


@dataclass
class Walk:
    """One session on one page: its AppTest, the path so far and each text input's default."""

    page: str
    seed: float
    at: AppTest = field(init=False)
    rng: random.Random = field(init=False)
    path: list[str] = field(default_factory=list)
    defaults: dict[str, str] = field(default_factory=dict)
    good: dict[str, str] = field(default_factory=dict)  # text input key → its last accepted value
    edits: dict[str, dict[str, Any]] = field(default_factory=dict)  # editor key → its edit state
    notices: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"{self.page}:{self.seed}")
        self.at = run_page(self.page)
        self.check("open")

    def report(self) -> str:
        shown = {w.key: w.value for kind in ("text_input", "radio", "toggle") for w in getattr(self.at, kind)}
        query = "&".join(f"{k}={v}" for k, v in {**shown, **self.at.query_params}.items())
        steps = "\n  ".join(self.path)
        return f"page {self.page}, seed {self.seed}, path:\n  {steps}\nquery: ?{query}"

    def widgets(self) -> list[tuple[str, Any]]:
        at = self.at
        found: list[tuple[str, Any]] = [("text", w) for w in at.text_input]
        found += [("radio", w) for w in at.radio if len(w.options) > 1]
        found += [("toggle", w) for w in at.toggle]
        found += [("editor", d) for d in at.dataframe if d.proto.editing_mode and d.key]
        return found

    def step(self) -> None:
        kind, w = self.rng.choice(self.widgets())
        if kind == "text":
            self.defaults.setdefault(w.key, w.value)
            default = self.defaults[w.key]
            now = self.good.get(w.key, default)  # a person moves on from a value the page accepted
            if now != default and self.rng.random() < 0.15:
                value = default
            elif self.rng.random() < EXTREME:
                value = extreme(now, self.rng)
            else:
                value = scaled(now, self.rng)
            w.set_value(value)
            what = f"{w.key} = {value}"
        elif kind == "radio":
            options = [o for o in w.options if o != w.value]
            value = self.rng.choice(options)
            w.set_value(value)
            what = f"{w.key} → {value}"
        elif kind == "toggle":
            value = not w.value
            w.set_value(value)
            what = f"{w.key} → {value}"
        else:
            what = self.edit(w)
        self.path.append(what)
        try:
            self.at.run()
        except RuntimeError as exc:  # AppTest's timeout: a person would wait that long, or give up
            raise AssertionError(f"{exc} after {what}\n" + self.report()) from None
        self.check(what)

    def edit(self, editor: Any) -> str:
        """A cell edited, a row added (a copy of one, a cell moved) or a row deleted, as the data
        editor's front end reports edits: positions in the seed table, added rows after them."""
        key = editor.key
        seed = editor.value  # the table the editor started from
        state = self.edits.setdefault(key, {"edited_rows": {}, "added_rows": [], "deleted_rows": []})
        columns = [str(c) for c in seed.columns]
        rows = [[str(v) for v in row] for row in seed.itertuples(index=False)]
        for pos, change in state["edited_rows"].items():
            rows[pos] = [change.get(c, v) for c, v in zip(columns, rows[pos], strict=True)]
        live = [("seed", i) for i in range(len(rows)) if i not in state["deleted_rows"]]
        live += [("added", i) for i in range(len(state["added_rows"]))]
        moves = ("cell", "cell", "cell", "add", "delete") if len(live) > 1 else ("cell", "add")
        move = self.rng.choice(moves)
        where, i = self.rng.choice(live)
        row = (dict(zip(columns, rows[i], strict=True)) if where == "seed"
               else {c: str(state["added_rows"][i].get(c, "")) for c in columns})
        if move == "delete":
            if where == "seed":
                state["deleted_rows"].append(i)
            else:
                state["added_rows"].pop(i)
            what = f"{key}: row {where} {i} deleted"
        else:
            column = self.rng.choice(columns)
            options = _options(editor, column)
            old = row[column]
            new = (self.rng.choice(options) if options else
                   extreme(old, self.rng) if self.rng.random() < EXTREME else scaled(old, self.rng))
            if move == "add":
                state["added_rows"].append({**row, column: new})
                what = f"{key}: row added {({**row, column: new})}"
            elif where == "seed":
                state["edited_rows"].setdefault(i, {})[column] = new
                what = f"{key}: row {i} {column} = {new}"
            else:
                state["added_rows"][i][column] = new
                what = f"{key}: added row {i} {column} = {new}"
        self.at.session_state[key] = state
        return what

    def check(self, what: str) -> None:
        assert not self.at.exception, (f"exception after {what}: {[e.value for e in self.at.exception]}\n"
                                       + self.report())
        visible = self.visible_fields()
        for text in errors(self.at):
            m = NOTICE.match(text)
            assert m is not None, f"not a notice naming a field after {what}: {text!r}\n" + self.report()
            name = m.group("field").strip("` ")
            assert any(v and (v in name or name in v) for v in visible), (
                f"the notice names {name!r}, which the page does not show (after {what}): {text!r}\n"
                + self.report())
            self.notices.append(text)
        for text in self.shown_text():
            assert ENGINE_FAILURE not in text, (f"an engine failure shown after {what}: {text!r}\n"
                                                + self.report())
        named = " ".join(errors(self.at))
        for w in self.at.text_input:
            if w.label not in named:
                self.good[w.key] = w.value

    def shown_text(self) -> list[str]:
        """Every table cell and paragraph on the page (where a route's note would say it failed)."""
        texts = [str(v) for frame in tables(self.at) for v in frame.to_numpy().ravel()]
        for kind in ("markdown", "caption", "warning", "info"):
            texts += [str(el.value) for el in getattr(self.at, kind)]
        return texts

    def visible_fields(self) -> set[str]:
        """What a notice may name: an input's label, a table's column, a key typed in a cell, a row."""
        at = self.at
        names = {w.label for kind in ("text_input", "radio", "toggle") for w in getattr(at, kind)}
        for d in at.dataframe:
            if d.proto.editing_mode:
                names.update(str(c) for c in d.value.columns)
                if d.key and d.key.startswith("mix_editor"):
                    names.add("mix[")  # mix[2].sigma: a row's parameter, typed or missing
                for cell in d.value.to_numpy().ravel():
                    names.update(re.findall(r"([A-Za-z_][\w-]*)\s*=", str(cell)))
        for state in self.edits.values():
            for change in [*state["edited_rows"].values(), *state["added_rows"]]:
                for cell in change.values():
                    names.update(re.findall(r"([A-Za-z_][\w-]*)\s*=", str(cell)))
        return names | {"row"}


def _options(editor: Any, column: str) -> list[str]:
    """A select-box column's options (the mix table's mechanism and neighbouring), else []."""
    import json

    config = json.loads(editor.proto.columns or "{}")
    for key, spec in config.items():
        if key.endswith(column) or spec.get("label") == column:
            options = spec.get("type_config", {}).get("options")
            if options:
                return [o["value"] if isinstance(o, dict) else str(o) for o in options]
    return []


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("seed", SEEDS)
def test_walk(page: str, seed: int) -> None:
    """``STEPS`` changes in one session; with ``DPVIZ_WALK_KEEP_GOING=1`` a failure opens a new
    session (seed ``seed``.1, .2, …) until ``STEPS`` changes are walked, and all failures are
    reported at the end."""
    walk, failures, steps, restarts = Walk(page, seed), [], 0, 0
    while steps < STEPS:
        steps += 1
        try:
            walk.step()
        except AssertionError as exc:
            if not KEEP_GOING:
                raise
            failures.append(str(exc))
            restarts += 1
            walk = Walk(page, float(f"{seed}.{restarts}"))
    print(f"\n{walk.report()}\nWALKED {page} seed {seed}: {steps} steps, {restarts} restarts")
    assert not failures, "\n\n".join(failures)

# --- what the walks found, pinned -------------------------------------------------------------------

def test_a_typed_null_for_another_k_is_named_by_its_label() -> None:
    """Database priors, Custom, a typed prior: a null hypothesis that does not fit k named its URL key
    (``null must be sizes |b| from 0 to k = 1001 …``), not the input a person sees."""
    at = run_page("pages/3_Database_priors.py", preset="Custom", k="1001", null="1000000",
                  kind="a prior you type (weights over |b| or over b)")
    assert not at.exception
    shown = errors(at)
    assert len(shown) == 1 and shown[0].startswith("null hypothesis p0 must be sizes |b| from 0 to k = 1001")


def test_too_many_mechanisms_in_all_is_named_by_the_count_column() -> None:
    """Composition curves, the heterogeneous table: rows of 10^7 + 10 mechanisms in all read
    ``levels must be at most 10,000,000 mechanisms in all`` (the URL key); the table's column now."""
    at = run_page("pages/2_Composition_curves.py", levels="0.1:0:10000000,0.5:0:10")
    assert not at.exception
    assert any(m.startswith("count (all rows) must be at most 10,000,000 mechanisms in all")
               for m in errors(at)), errors(at)


def test_a_mix_cell_without_key_is_a_notice() -> None:
    """Mechanisms, the mix table: a parameters cell typed as ``0.5`` (no ``sigma=``) raised the
    core's ParameterError outside any notice (an exception box); now it names the cell."""
    at = run_page("pages/4_Mechanisms.py")
    at.session_state["mix_editor_0"] = {"edited_rows": {0: {"parameters": "0.5"}}, "added_rows": [],
                                        "deleted_rows": []}
    at.run()
    assert not at.exception
    assert any(m.startswith("mix[0].parameters must be key=value pairs separated by ;") for m in errors(at))


def test_a_typed_zero_sampling_rate_after_fixed_size_is_a_notice() -> None:
    """Mechanisms: q typed as 0, fixed-size, back to Poisson, then any change: the old-link migration
    (sampling_rate=0 meant no subsampling) ran on every run and set the widget-bound key, which
    Streamlit refuses (an exception box). It runs once, as a link opens; the 0 gets its notice."""
    at = run_page("pages/4_Mechanisms.py")
    at.text_input(key="sampling_rate").set_value("0")
    at.run()
    for change in (lambda: at.radio(key="sampling").set_value("fixed-size"),
                   lambda: at.radio(key="sampling").set_value("Poisson"),
                   lambda: at.toggle(key="compare").set_value(True)):
        change()
        at.run()
        assert not at.exception
    assert any(m.startswith("sampling rate q must be a number in (0, 1], got `'0'`") for m in errors(at))
