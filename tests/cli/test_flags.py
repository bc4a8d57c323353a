"""CLI flags come from the ``Param`` specs (``dpviz.cli.flags``): every spec has its flag and help,
a bad value names the flag typed, and a page's URL keys are valid flags of ``figure``."""

from __future__ import annotations

import argparse
from functools import partial

import pytest

from dpviz.cli import build_parser, main
from dpviz.cli import compose as compose_cli
from dpviz.cli import gce as gce_cli
from dpviz.cli.flags import add_param_flags, flag, values_from_args
from dpviz.params import Param
from dpviz.validation import ParameterError, check_count, check_epsilon
from dpviz.views.catalog import registry


def _subparser(*path: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def _help_of(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Help text by destination, for every option of ``parser``."""
    return {a.dest: a.help or "" for a in parser._actions if a.option_strings}


CASES = [(("compose",), (*compose_cli.PARAMS, *compose_cli.TARGETS)), (("gce",), gce_cli.PARAMS)] + [
    (("figure", name), spec.params) for name, spec in registry().items()]


@pytest.mark.parametrize(("path", "params"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_every_param_has_its_flag_and_help(path, params) -> None:
    parser = _subparser(*path)
    helps = _help_of(parser)
    strings = {s for a in parser._actions for s in a.option_strings}
    for p in params:
        assert flag(p) in strings, (path, p.key)
        assert ("--" + p.key) in strings, (path, p.key)  # the URL key as written is a flag too
        assert helps[p.key].startswith(p.help or p.label), (path, p.key)
    text = parser.format_help()
    assert all(flag(p) in text for p in params)


def test_defaults_come_from_the_specs() -> None:
    for spec in registry().values():
        helps = _help_of(_subparser("figure", spec.name))
        for p in spec.params:
            if p.default is not None:
                shown = f"{p.default:g}" if isinstance(p.default, float) else str(p.default)
                assert f"(default {shown.lower() if isinstance(p.default, bool) else shown})" in helps[p.key]


def test_values_are_checked_by_the_spec_and_errors_name_the_flag() -> None:
    spec = Param("k_max", "largest k plotted", 10, partial(check_count, field="largest k", maximum=50))
    parser = argparse.ArgumentParser()
    add_param_flags(parser, (spec,))
    assert values_from_args(parser.parse_args([]), (spec,)) == {"k_max": 10}
    assert values_from_args(parser.parse_args(["--k_max", "20"]), (spec,)) == {"k_max": 20}
    with pytest.raises(ParameterError) as info:
        values_from_args(parser.parse_args(["--k-max", "51"]), (spec,))
    assert info.value.field == "k-max" and info.value.allowed == "a whole number in [1, 50]"


def test_optional_flags_are_left_out_and_required_ones_enforced() -> None:
    eps = Param("eps", "ε", 1.0, partial(check_epsilon, field="eps"))
    parser = argparse.ArgumentParser()
    add_param_flags(parser, (eps,), optional=("eps",))
    assert values_from_args(parser.parse_args([]), (eps,), optional=("eps",)) == {}
    strict = argparse.ArgumentParser()
    add_param_flags(strict, (eps,), required=("eps",))
    with pytest.raises(SystemExit):
        strict.parse_args([])
    assert values_from_args(strict.parse_args(["--eps", "2"]), (eps,)) == {"eps": 2.0}


@pytest.mark.parametrize(("argv", "field"), [
    (["figure", "curves", "--k-max", "0", "--out", "x.csv"], "k-max"),  # the spec names it "largest k"
    (["figure", "regions", "--ks", "a,b", "--out", "x.csv"], "ks"),
    (["figure", "priors", "--neighbouring", "sideways", "--out", "x.csv"], "neighbouring"),
    (["figure", "priors", "--preset", "nowhere", "--out", "x.csv"], "preset"),
    (["compose", "--eps0", "0.1", "--k", "3", "--epsilon", "-1"], "epsilon"),
    (["compose", "--levels", "0.1:0:0", "--delta", "1e-5"], "k"),  # a cell keeps its own name
    (["gce", "--eps0", "0.1", "--k", "3", "--delta", "1e-5", "--cap", "1", "--budget", "-1"], "budget"),
])
def test_bad_values_name_the_field(capsys, tmp_path, monkeypatch, argv, field) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"error: {field} must be " in err[0], err


def test_old_url_keys_are_flags_too(tmp_path) -> None:
    """A link shared before a URL key was renamed (``?nb=bounded``) still reads as flags."""
    out = tmp_path / "x.json"
    parser = build_parser()
    spec = registry()["priors"]
    assert spec.aliases  # nb → neighbouring
    for old, new in spec.aliases.items():
        args = parser.parse_args(["figure", "priors", f"--{old}", "bounded", "--out", str(out)])
        assert values_from_args(args, spec.params)[new] == "bounded"


def test_a_scenario_is_named_by_its_key_or_its_title() -> None:
    """``--preset`` takes the CLI key or the title a shared URL holds: the same scenario."""
    from dpviz.views.database_priors import PRESET

    assert PRESET.check("subsidiaries") == PRESET.check("Subsidiaries") == "subsidiaries"
