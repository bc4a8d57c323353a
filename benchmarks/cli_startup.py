"""Start-up cost of the ``dpviz`` command (issue 19 item 7): CPU time spent importing, per subcommand.

Each command runs ``--repeats`` times as a fresh ``python -X importtime`` process, in two modes in
the same run: **lazy** (``dpviz.cli.main``, as installed: only the typed subcommand's module is
imported) and **eager** (every subcommand registered first, as the CLI did before: the reference
for the ratio). Per command and mode, the median of

- *imports*: the process CPU time (user + system, ``time.process_time``) spent inside outermost
  ``import`` statements and ``importlib.import_module`` calls, start-up to exit (a hook in the
  runner), so a subcommand that imports while it answers is charged too;
- *CPU*: the whole process's CPU time (``getrusage`` of the child), and the bare interpreter's
  (``python -c pass``) in the same run;
- *modules*: how many modules ``-X importtime`` saw beyond the bare interpreter's, and which of
  scipy, plotly, streamlit, kaleido were among them.

CPU time rather than ``-X importtime``'s wall times: on a shared machine those count the time
the process waited for a core. Goal: ``--help`` and ``compose`` spend < 0.3 s in imports. Writes
``benchmarks/results/cli_startup.md`` and prints it.

    python benchmarks/cli_startup.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "cli_startup.md"
GOAL_S = 0.3
COMMANDS = (
    "--help",
    "compose --eps0 0.1 --k 10 --delta 1e-5",
    "compose --levels 0.1:1e-6:30,0.5:0:10 --delta 1e-4",
    "compose --eps0 -1 --k 10 --delta 1e-5",
    "gce --eps0 0.1 --delta0 1e-6 --k 2000 --cap 365 --delta 1e-2",
    "plan eps0 --epsilon 1 --delta 1e-5 --k 100",
    "mechanism gaussian --sigma 1.1 --k 100 --delta 1e-5",
    "figure regions --eps0 0.1 --k 30 --list-figures",
)
"""A grid over the subcommands: the two of the goal first (a bad value too), then the others, which
need scipy or plotly for their answer, so only the unused subcommands' imports are saved."""
GOAL_COMMANDS = COMMANDS[:2]
HEAVY = ("kaleido", "plotly", "scipy", "streamlit")
_PROLOGUE = f"""\
import atexit, builtins, importlib, sys, time
_state = {{"depth": 0, "cpu": 0.0}}
def _charged(load):
    def wrapper(*args, **kwargs):
        if _state["depth"]:
            return load(*args, **kwargs)
        _state["depth"], start = 1, time.process_time()
        try:
            return load(*args, **kwargs)
        finally:
            _state["depth"], _state["cpu"] = 0, _state["cpu"] + time.process_time() - start
    return wrapper
builtins.__import__ = _charged(builtins.__import__)
importlib.import_module = _charged(importlib.import_module)
def _report():
    heavy = sorted({{m.split(".")[0] for m in sys.modules}} & {set(HEAVY)!r})
    sys.stderr.write(f"IMPORT_CPU {{_state['cpu']}}\\nHEAVY {{' '.join(heavy) or '-'}}\\n")
atexit.register(_report)
"""
MODES = {
    "lazy": _PROLOGUE + "from dpviz.cli import main\nsys.exit(main())\n",
    "eager": _PROLOGUE + "from dpviz.cli import build_parser, main\nbuild_parser()\nsys.exit(main())\n",
}
"""``python -c`` runners; ``eager`` registers every subcommand before ``main`` parses, as before."""
_LINE = re.compile(r"^import time:\s+\d+\s+\|\s+\d+\s+\|\s*(\S+)$")


class Run:
    """One process: modules imported, CPU in imports, CPU in all, heavy packages."""

    def __init__(self, code: str, args: list[str]) -> None:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        self.modules = {m.group(1) for line in proc.stderr.splitlines() if (m := _LINE.match(line))}
        self.import_cpu, self.heavy = 0.0, "-"
        for line in proc.stderr.splitlines():
            if line.startswith("IMPORT_CPU "):
                self.import_cpu = float(line.split()[1])
            elif line.startswith("HEAVY "):
                self.heavy = line[6:]


def measure(repeats: int) -> list[str]:
    base = [Run("pass", []) for _ in range(repeats)]
    interpreter = set().union(*(b.modules for b in base))
    base_cpu = statistics.median(b.cpu for b in base)
    rows = ["| command | mode | imports, CPU (s) | process CPU (s) | modules | heavy packages | "
            "imports, eager ÷ lazy |",
            "|---|---|---:|---:|---:|---|---:|"]
    verdict = []
    for command in COMMANDS:
        got = {}
        for mode, runner in MODES.items():
            runs = [Run(runner, command.split()) for _ in range(repeats)]
            got[mode] = (statistics.median(r.import_cpu for r in runs),
                         statistics.median(r.cpu for r in runs), len(runs[-1].modules - interpreter),
                         runs[-1].heavy)
        for mode, (imports, cpu, modules, heavy) in got.items():
            ratio = f"{got['eager'][0] / imports:.1f}" if mode == "lazy" else ""
            rows.append(f"| `dpviz {command}` | {mode} | {imports:.3f} | {cpu:.3f} | {modules} | {heavy} | "
                        f"{ratio} |")
        if command in GOAL_COMMANDS:
            imports = got["lazy"][0]
            verdict.append(f"- `dpviz {command}`: {imports:.3f} s of CPU in imports: "
                           f"{'met' if imports < GOAL_S else 'NOT met'} (goal < {GOAL_S} s).")
    return [*rows, "", f"The bare interpreter (`python -c pass`): {base_cpu:.3f} s of process CPU (median).",
            "", "Goal:", *verdict]


def _load(avg: tuple[float, float, float]) -> str:
    return ", ".join(f"{x:.2f}" for x in avg)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    opts = ap.parse_args()
    load_before = os.getloadavg()
    rows = measure(opts.repeats)
    load_after = os.getloadavg()
    head = ["# CLI start-up (issue 19 item 7)", "",
            f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared), "
            f"Python {platform.python_version()}; median of {opts.repeats} fresh processes per command and "
            f"mode; load average (1, 5, 15 min) {_load(load_before)} before, {_load(load_after)} after.", ""]
    text = "\n".join(head + rows) + "\n"
    OUT.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
