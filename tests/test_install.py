"""The package installs from a wheel, and its ``dpviz`` console command is ``python -m dpviz``.

Builds a wheel from a copy of the sources with the installed setuptools (no build isolation, no
network), installs it into a fresh venv that sees this interpreter's site-packages (so the
runtime dependencies are not downloaded again), and runs the console command from a directory
that holds no ``dpviz`` source, so the installed copy is the one imported.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import dpviz

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["compose", "--eps0", "0.1", "--k", "10", "--delta", "1e-5"]
ENV = {**os.environ, "COLUMNS": "100", "PYTHONDONTWRITEBYTECODE": "1"}


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=300, check=False)


def _requirements() -> list[str]:
    """requirements.txt's lines without comments: what the wheel must declare."""
    lines = (line.split("#", 1)[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines())
    return [line for line in lines if line]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Build, install, and give (wheel, venv bin directory, a working directory without sources)."""
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "requirements.txt"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "dpviz", src / "dpviz", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    wheels = tmp / "wheels"
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                  "--disable-pip-version-check", "-q", "-w", str(wheels), str(src)], cwd=tmp)
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("dpviz-*.whl")
    venv = tmp / "venv"
    # without its own pip (bootstrapping one is the slowest step): this pip installs into it
    made = _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], cwd=tmp)
    assert made.returncode == 0, made.stderr
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    if sys.prefix != sys.base_prefix:  # inside a venv, --system-site-packages does not reach its packages
        where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
        purelib = _run([str(bindir / "python"), "-c", where], cwd=tmp).stdout.strip()
        Path(purelib, "outer_site.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    inst = _run([sys.executable, "-m", "pip", "--python", str(bindir / "python"), "install", "--no-deps",
                 "--no-index", "--disable-pip-version-check", "-q", str(wheel)], cwd=tmp)
    assert inst.returncode == 0, inst.stderr
    work = tmp / "work"
    work.mkdir()
    return wheel, bindir, work


Installed = tuple[Path, Path, Path]
"""(wheel, venv bin directory, a working directory without sources)."""


def test_wheel_holds_only_the_package_with_single_sourced_metadata(installed: Installed) -> None:
    wheel, _, _ = installed
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = zf.read(meta_name).decode()
        entry = zf.read(meta_name.replace("METADATA", "entry_points.txt")).decode()
    outside = [n for n in names if not n.startswith(("dpviz/", f"dpviz-{dpviz.__version__}.dist-info/"))]
    assert outside == []  # no pages/, app.py, tests/ or benchmarks/ in the wheel
    assert "dpviz/cli/__init__.py" in names
    assert "dpviz/py.typed" in names  # PEP 561 marker: users' type checkers read the hints
    assert f"Version: {dpviz.__version__}\n" in meta
    declared = [Requirement(line.removeprefix("Requires-Dist: ")) for line in meta.splitlines()
                if line.startswith("Requires-Dist: ")]
    # the wheel declares exactly requirements.txt (SpecifierSet equality ignores clause order)
    wanted = [Requirement(line) for line in _requirements()]
    assert {(r.name, r.specifier) for r in declared} == {(r.name, r.specifier) for r in wanted}
    assert "dpviz = dpviz.cli:main" in entry


def test_console_command_prints_what_python_m_dpviz_prints(installed: Installed) -> None:
    _, bindir, work = installed
    where = _run([str(bindir / "python"), "-c", "import dpviz; print(dpviz.__file__)"], cwd=work)
    assert Path(where.stdout.strip()).resolve().is_relative_to(bindir.parent.resolve())  # the installed copy
    console = _run([str(bindir / "dpviz"), *ARGS], cwd=work)
    module = _run([sys.executable, "-m", "dpviz", *ARGS], cwd=ROOT)
    assert console.returncode == module.returncode == 0, console.stderr + module.stderr
    assert json.loads(console.stdout) == json.loads(module.stdout)
    assert json.loads(console.stdout)["optimal"]["kind"] == "exact"


def test_console_command_help_and_errors_match_python_m_dpviz(installed: Installed) -> None:
    _, bindir, work = installed
    console = _run([str(bindir / "dpviz"), "--help"], cwd=work)
    module = _run([sys.executable, "-m", "dpviz", "--help"], cwd=ROOT)
    assert console.returncode == module.returncode == 0
    # the same help, each naming the command as the user typed it (issue 21 item 2)
    assert console.stdout.startswith("usage: dpviz ") and module.stdout.startswith("usage: python -m dpviz ")
    assert console.stdout == module.stdout.replace("python -m dpviz", "dpviz")
    bad = ["compose", "--eps0", "-1", "--k", "10", "--delta", "1e-5"]
    console = _run([str(bindir / "dpviz"), *bad], cwd=work)
    module = _run([sys.executable, "-m", "dpviz", *bad], cwd=ROOT)
    assert console.returncode == module.returncode == 2  # the exit status reaches the shell
    assert console.stdout == module.stdout == ""
    assert console.stderr == module.stderr.replace("python -m dpviz", "dpviz")
    assert len(console.stderr.strip().splitlines()) == 1 and "eps0" in console.stderr
