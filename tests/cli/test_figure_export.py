"""``python -m dpviz figure``: the page's figure, exported headlessly through kaleido + chromium."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None,
                                    reason="Debian's chromium is installed by scripts/test.sh")


def dpviz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dpviz", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


@needs_chromium
def test_svg_export_is_the_page_figure(tmp_path):
    out = tmp_path / "regions.svg"
    r = dpviz("figure", "regions", "--eps0", "0.2", "--k", "12", "--which", "methods", "--out", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert text.lstrip().startswith("<svg")
    # the same title the page shows for these parameters (dpviz.views.regions)
    assert "Regions proved for k = 12 mechanisms, each (0.2, 0.001)-DP" in text
    assert json.loads(r.stdout)["parameters"] == {"eps0": 0.2, "delta0": 0.001, "k": 12}


@needs_chromium
@pytest.mark.parametrize("fmt,magic", [("png", b"\x89PNG"), ("pdf", b"%PDF")])
def test_png_and_pdf_exports(tmp_path, fmt, magic):
    out = tmp_path / f"curves.{fmt}"
    r = dpviz("figure", "curves", "--k-max", "50", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:4] == magic


def test_list_figures():
    r = dpviz("figure", "curves", "--list-figures")
    assert r.returncode == 0
    assert json.loads(r.stdout)["figures"] == ["epsilon_vs_k", "delta_vs_epsilon"]


@pytest.mark.parametrize("args,field", [
    (["figure", "regions", "--out", "x.gif"], "out"),
    (["figure", "regions", "--eps0", "-3", "--out", "x.svg"], "ε0"),
    (["figure", "regions", "--which", "nope", "--out", "x.svg"], "which"),
    (["figure", "regions"], "out"),
])
def test_bad_arguments_exit_2_with_one_line(args, field):
    r = dpviz(*args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{field} must be" in lines[0], r.stderr
    assert r.stdout == ""


@needs_chromium
def test_priors_figure_uses_the_scenario_defaults(tmp_path):
    out = tmp_path / "subsidiaries.svg"
    r = dpviz("figure", "priors", "--preset", "subsidiaries", "--k", "40", "--out", str(out))
    assert r.returncode == 0, r.stderr
    params = json.loads(r.stdout)["parameters"]
    assert params["kind"] == "cap" and params["cap"] == 1  # the preset's own cap, not the 365 default
    assert "at most 1 database(s) per person" in out.read_text()


def test_priors_bad_preset_names_the_field():
    r = dpviz("figure", "priors", "--preset", "nope", "--out", "x.svg")
    assert r.returncode == 2 and "preset must be one of" in r.stderr
