"""File names carry every input (issue 10 item 5): two scenarios never overwrite each other."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from dpviz.composition.levels import parse_levels
from dpviz.export import STEM_MAX, file_stem

SAFE = re.compile(r"[A-Za-z0-9._-]+")

# The pages' parameters: each key has one type (numbers, a choice, a switch, a table of levels).
SCHEMA = {"eps0": st.floats(allow_nan=False), "k": st.integers(1, 10**7), "rate": st.none() | st.floats(0, 1),
          "preset": st.sampled_from(["hospitals", "subsidiaries", "custom", "at-least"]),
          "log_k": st.booleans(), "levels": st.lists(st.floats(0, 100), max_size=6)}
values = st.fixed_dictionaries({}, optional=SCHEMA)


@given(values)
def test_stems_are_safe_short_and_deterministic(v):
    stem = file_stem("view", v)
    assert SAFE.fullmatch(stem) and len(stem) <= STEM_MAX
    assert file_stem("view", dict(reversed(list(v.items())))) == stem  # key order does not matter


@given(values, values)
def test_different_inputs_give_different_stems(a, b):
    if a != b and {k: repr(x) for k, x in a.items()} != {k: repr(x) for k, x in b.items()}:
        assert file_stem("view", a) != file_stem("view", b)


def test_every_input_is_in_the_name():
    stem = file_stem("priors", {"preset": "hospitals", "eps0": 0.1, "delta0": 0.001, "delta": 1e-05,
                                "k": 1000, "cap": 365})
    assert stem == "dpviz_priors_cap-365_delta-1e-05_delta0-0.001_eps0-0.1_k-1000_preset-hospitals"
    # δ0 and C differ: the old names ("hospitals_eps0.1_delta1e-05_k1000") were equal
    assert stem != file_stem("priors", {"preset": "hospitals", "eps0": 0.1, "delta0": 1e-6, "delta": 1e-05,
                                        "k": 1000, "cap": 365})
    assert stem != file_stem("priors", {"preset": "hospitals", "eps0": 0.1, "delta0": 0.001, "delta": 1e-05,
                                        "k": 1000, "cap": 1})


def test_full_precision_values_are_told_apart():
    assert file_stem("r", {"eps0": 0.1234567}) != file_stem("r", {"eps0": 0.1234568})


def test_long_or_unsafe_inputs_end_with_a_hash_of_all_of_them():
    levels = parse_levels("0.1:1e-6:30,0.5:0:10")
    stem = file_stem("curves", {"levels": levels, "k": 30})
    assert stem.startswith("dpviz_curves_k-30_levels-0.1") and SAFE.fullmatch(stem)
    other = file_stem("curves", {"levels": parse_levels("0.1:1e-6:30,0.5:0:11"), "k": 30})
    assert other != stem
    long = file_stem("x", {f"p{i}": 0.123456789 for i in range(40)})
    assert len(long) <= STEM_MAX and long != file_stem("x", {f"p{i}": 0.123456788 for i in range(40)})
