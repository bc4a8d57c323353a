"""Input checks: every bad value is a ParameterError whose message names the field and the range."""

from __future__ import annotations

import math

import pytest

from dpviz.composition import Level, optimal, parse_levels
from dpviz.validation import ParameterError, check_count, check_delta, check_epsilon

BAD = [
    pytest.param(check_epsilon, -1, "epsilon", "[0, 100]", id="eps-negative"),
    pytest.param(check_epsilon, 100.5, "epsilon", "[0, 100]", id="eps-above-100"),
    pytest.param(check_epsilon, math.nan, "epsilon", "[0, 100]", id="eps-nan"),
    pytest.param(check_epsilon, math.inf, "epsilon", "[0, 100]", id="eps-inf"),
    pytest.param(check_epsilon, "abc", "epsilon", "[0, 100]", id="eps-abc"),
    pytest.param(check_epsilon, 10**400, "epsilon", "[0, 100]", id="eps-int-beyond-float"),
    pytest.param(check_epsilon, None, "epsilon", "[0, 100]", id="eps-none"),
    pytest.param(check_delta, 1.0, "delta", "[0, 1)", id="delta-one"),
    pytest.param(check_delta, -1e-9, "delta", "[0, 1)", id="delta-negative"),
    pytest.param(check_delta, "nan", "delta", "[0, 1)", id="delta-nan-string"),
    pytest.param(check_delta, "abc", "delta", "[0, 1)", id="delta-abc"),
    pytest.param(check_delta, True, "delta", "[0, 1)", id="delta-bool"),
    pytest.param(check_count, 0, "k", "[1, 10,000,000]", id="k-zero"),
    pytest.param(check_count, -3, "k", "[1, 10,000,000]", id="k-negative"),
    pytest.param(check_count, 1.5, "k", "[1, 10,000,000]", id="k-fraction"),
    pytest.param(check_count, 10**8, "k", "[1, 10,000,000]", id="k-absurd"),
    pytest.param(check_count, 10**400, "k", "[1, 10,000,000]", id="k-int-beyond-float"),
    pytest.param(check_count, math.inf, "k", "[1, 10,000,000]", id="k-inf"),
    pytest.param(check_count, "abc", "k", "[1, 10,000,000]", id="k-abc"),
]


@pytest.mark.parametrize(("check", "value", "field", "allowed"), BAD)
def test_bad_value_names_field_and_range(check, value, field, allowed) -> None:
    with pytest.raises(ParameterError) as info:
        check(value)
    msg = str(info.value)
    assert info.value.field == field
    assert msg.startswith(f"{field} must be ") and allowed in msg, msg


def test_custom_field_name_is_used() -> None:
    with pytest.raises(ParameterError, match=r"^eps0 must be a number in \[0, 100\], got eps0=-1$"):
        check_epsilon(-1, field="eps0")


@pytest.mark.parametrize(("check", "value", "want"), [
    pytest.param(check_epsilon, "0.5", 0.5, id="eps-string"),
    pytest.param(check_epsilon, 0, 0.0, id="eps-zero"),
    pytest.param(check_epsilon, 100, 100.0, id="eps-max"),
    pytest.param(check_delta, 0, 0.0, id="delta-zero"),
    pytest.param(check_count, "1e3", 1000, id="k-1e3-string"),
    pytest.param(check_count, 10_000_000, 10_000_000, id="k-max"),
])
def test_good_values_pass(check, value, want) -> None:
    assert check(value) == want


BAD_LEVELS = [
    pytest.param("abc", "levels", "ε:δ:count", id="abc"),
    pytest.param("", "levels", "ε:δ:count", id="empty"),
    pytest.param(" , ", "levels", "ε:δ:count", id="only-commas"),
    pytest.param("0.1:1e-6", "levels", "ε:δ:count", id="two-fields"),
    pytest.param("0.1:1e-6:3:4", "levels", "ε:δ:count", id="four-fields"),
    pytest.param("-1:0:3", "eps0", "[0, 100]", id="negative-eps"),
    pytest.param("nan:0:3", "eps0", "[0, 100]", id="nan-eps"),
    pytest.param("0.1:1:3", "delta0", "[0, 1)", id="delta-one"),
    pytest.param("0.1:abc:3", "delta0", "[0, 1)", id="delta-abc"),
    pytest.param("0.1:0:0", "k", "[1, 10,000,000]", id="count-zero"),
    pytest.param("0.1:0:2.5", "k", "[1, 10,000,000]", id="count-fraction"),
    pytest.param("0.1:0:20000000", "k", "[1, 10,000,000]", id="count-absurd"),
    pytest.param("0.1:0:6000000,0.2:0:6000000", "levels", "10,000,000", id="total-absurd"),
]


@pytest.mark.parametrize(("text", "field", "allowed"), BAD_LEVELS)
def test_parse_levels_rejects(text: str, field: str, allowed: str) -> None:
    with pytest.raises(ParameterError) as info:
        parse_levels(text)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field} must be ") and allowed in str(info.value)


def test_parse_levels_good_and_merges_equal_rows() -> None:
    assert parse_levels("0.1:1e-6:30,0.5:0:10") == (
        Level(epsilon=0.1, delta=1e-6, count=30), Level(epsilon=0.5, delta=0.0, count=10))
    assert parse_levels("0.1:0:3, 0.1:0:4") == (Level(epsilon=0.1, delta=0.0, count=7),)


def test_too_many_heterogeneous_atoms_says_so_and_keeps_other_methods() -> None:
    levels = parse_levels("0.1:0:3000,0.2:0:3000")  # 3001² ≈ 9·10^6 atoms > MAX_ATOMS
    with pytest.raises(ParameterError) as info:
        optimal.loss_atoms(levels)
    assert info.value.field == "levels" and "atoms" in str(info.value)
    g = optimal.epsilon_for_delta(levels, delta=1e-5)
    assert not g.feasible and "too large for the exact sum" in g.reason and "atoms" in g.reason
    # the CLI still answers for the closed forms
    from dpviz.cli import main

    assert main(["compose", "--levels", "0.1:0:3000,0.2:0:3000", "--delta", "1e-5"]) == 0


def test_level_rejects_bad_fields() -> None:
    with pytest.raises(ParameterError, match=r"^eps0 must be"):
        Level(epsilon=-0.1, delta=0.0, count=1)
    with pytest.raises(ParameterError, match=r"^delta0 must be"):
        Level(epsilon=0.1, delta=1.5, count=1)
    with pytest.raises(ParameterError, match=r"^k must be"):
        Level(epsilon=0.1, delta=0.0, count=0)
