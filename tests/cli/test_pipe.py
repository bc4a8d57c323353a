"""Piping the CLI into a reader that stops early (``| head``) prints no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_closed_pipe_is_quiet() -> None:
    # the reader closes its end at once; compose prints ~40 lines of JSON into the closed pipe
    cmd = (f"{sys.executable} -m dpviz compose --eps0 0.1 --k 10 --delta 1e-5 | "
           f"{sys.executable} -c 'import sys; sys.stdin.close()'")
    r = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr == ""
