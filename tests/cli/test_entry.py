"""The command as a user meets it (issue 21 item 2, issue 19 item 7): ``--help`` says what each
subcommand answers with an example, usage and errors name the program the user typed (``dpviz``
or ``python -m dpviz``), JSON is UTF-8 whatever the locale, and only the typed subcommand is
imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpviz.cli import SUBCOMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]
NOISE = ["plan", "noise", "gaussian", "--epsilon", "3", "--delta", "1e-5", "--k", "1000"]
"""An answer whose JSON carries Greek letters (the forward check's "σ = …" source)."""


def _run(argv: list[str], *, script: Path | None = None, env: dict[str, str] | None = None,
         ) -> subprocess.CompletedProcess[bytes]:
    head = [sys.executable, str(script)] if script else [sys.executable, "-m", "dpviz"]
    return subprocess.run([*head, *argv], cwd=ROOT, capture_output=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


@pytest.fixture(scope="module")
def console_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What ``pip install`` writes for ``[project.scripts] dpviz = "dpviz.cli:main"``."""
    path = tmp_path_factory.mktemp("bin") / "dpviz"
    path.write_text("import sys\nfrom dpviz.cli import main\nsys.exit(main())\n", encoding="utf-8")
    return path


def test_help_says_what_each_subcommand_answers_with_an_example() -> None:
    r = _run(["--help"])
    text = r.stdout.decode("utf-8")
    assert r.returncode == 0 and "register(subparsers)" not in text and "``" not in text
    for name, sub in SUBCOMMANDS.items():
        assert sub.summary.split()[0] in text and f"python -m dpviz {sub.example}" in text, name
        assert sub.example.split()[0] == name


def test_every_example_in_the_help_runs() -> None:
    """The help's examples are valid command lines (parsed by the full parser)."""
    parser = build_parser()
    for sub in SUBCOMMANDS.values():
        args = parser.parse_args(sub.example.split())
        assert callable(args.handler)


def test_usage_and_errors_name_the_console_command(console_script: Path) -> None:
    r = _run(["compose", "--eps0", "-1", "--k", "10", "--delta", "1e-5"], script=console_script)
    assert r.returncode == 2 and r.stderr.decode().startswith("dpviz compose: error: ")
    r = _run(["compose"], script=console_script)  # argparse's own error, as one line
    assert r.returncode == 2 and r.stderr.decode().startswith("dpviz compose: error: one of the arguments")
    r = _run(["compose", "--help"], script=console_script)
    assert r.stdout.decode().startswith("usage: dpviz compose ")
    r = _run(["--help"], script=console_script)
    assert r.stdout.decode().startswith("usage: dpviz ") and "  dpviz compose --eps0" in r.stdout.decode()
    r = _run(["compose", "--eps0", "-1", "--k", "10", "--delta", "1e-5"])  # python -m dpviz keeps its name
    assert r.returncode == 2 and r.stderr.decode().startswith("python -m dpviz compose: error: ")


@pytest.mark.parametrize("env", [{}, {"PYTHONIOENCODING": "ascii", "LC_ALL": "C"}], ids=["default", "ascii"])
def test_json_is_utf8_without_escapes(env: dict[str, str]) -> None:
    r = _run(NOISE, env=env)
    assert r.returncode == 0, r.stderr
    text = r.stdout.decode("utf-8")  # UTF-8 whatever the locale says
    assert "σ" in text and "\\u03c3" not in text and "\\u" not in text
    json.loads(text)


def test_only_the_typed_subcommand_is_imported() -> None:
    code = ("import sys; from dpviz.cli import main; main(sys.argv[1:]); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'plotly') "
            "or m.startswith('dpviz.cli.')), file=sys.stderr)")
    argv = ["compose", "--eps0", "0.1", "--k", "10", "--delta", "1e-5"]
    r = subprocess.run([sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True,
                       timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0
    assert r.stderr.strip().splitlines()[-1] == "['dpviz.cli.compose', 'dpviz.cli.flags']"
