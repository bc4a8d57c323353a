"""The README's opening commands work for a newcomer (issue 21): a virtual environment first (a
distribution's Python refuses a global ``pip install``, PEP 668), the app's address stated (the
server is headless: no browser opens), and how long the install and the tests take."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
OPENING = README[:README.index("## ")]
FIRST_BLOCK = re.search(r"```bash\n(.*?)```", OPENING, re.S).group(1)  # type: ignore[union-attr]


def test_a_virtual_environment_comes_before_the_first_pip_install():
    lines = FIRST_BLOCK.splitlines()
    venv = next(i for i, line in enumerate(lines) if "python3 -m venv" in line)
    pip = next(i for i, line in enumerate(lines) if line.startswith("pip install"))
    assert venv < pip and "activate" in lines[venv]
    assert "PEP 668" in OPENING


def test_the_headless_app_is_given_by_its_address():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["headless"] is True
    port = config["server"].get("port", 8501)  # Streamlit's default
    assert f"http://localhost:{port}" in FIRST_BLOCK
    assert "open the app" not in FIRST_BLOCK, "a headless server opens no browser"


def test_install_and_test_times_are_stated():
    assert re.search(r"pip install -r\s+requirements\.txt` took (\d+ min )?\d+ s", OPENING)
    assert re.search(r"`bash scripts/test\.sh` took about \d+ minutes", OPENING)
