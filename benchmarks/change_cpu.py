"""CPU per widget change, in process, per page (issue 20, "cost per interaction").

    python benchmarks/change_cpu.py                       # writes benchmarks/results/change_cpu.md
    python benchmarks/change_cpu.py --pages regions --changes 20
    python benchmarks/change_cpu.py --before ../main      # also the code of another checkout, same run
    python benchmarks/change_cpu.py --pages regions --profile 25   # where the time goes (cProfile)

Each page runs in Streamlit's ``AppTest`` (the page's script, its caches, the figures' and tables'
serialisation into Streamlit's messages, without the websocket and the browser), one fresh process
per page and checkout. After a first run and one rerun with nothing changed, a seeded random walk
changes one input at a time as ``server_cpu.py`` does through a browser: a text input goes back
to its default (3 times in 10, when it is away from it) or to a nearby value
(``page_latency.nearby``: numbers scaled by 0.5–2), a radio to another option, a slider by one
step, a toggle flips. Cache misses are included, as a person meets them. Each change costs the
process's CPU time (``time.process_time``: every thread, so Streamlit's script thread too; other
jobs on a shared machine do not inflate it, as they inflate wall time) over ``AppTest.run``; the
test harness's reading of the messages is in it (about 1 ms). With ``--before``, the two checkouts
run page by page, alternately, under the same load.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "change_cpu.md"
PAGES = {"regions": "pages/1_Privacy_regions.py", "curves": "pages/2_Composition_curves.py",
         "priors": "pages/3_Database_priors.py", "mechanisms": "pages/4_Mechanisms.py",
         "planner": "pages/5_Plan_a_budget.py", "attack": "pages/6_Attack_lab.py"}
NOTES = "## Where the time goes"
"""The hand-written part of the results file, kept when the tables are measured again."""
TARGETS = {"regions": 50, "curves": 50, "priors": 50, "attack": 50, "mechanisms": 200, "planner": 300}
"""Issue 20's targets for a widget change at p95, in ms of server CPU."""


def nearby(text: str, rng: random.Random) -> str:
    """A value a person might try next (``page_latency.nearby``, repeated: a child process runs from
    the checkout measured, whose benchmarks may differ)."""
    try:
        x = float(text)
    except ValueError:
        return text
    factor = rng.choice((0.5, 0.8, 1.25, 2.0))
    if re.fullmatch(r"\d+", text.strip()):
        return str(max(1, round(x * factor)))
    return f"{x * factor:.4g}"


def change(at: Any, rng: random.Random, defaults: dict[str, str]) -> str:
    """Change one input as a person would; returns what was changed."""
    widgets = [*(("text", w) for w in at.text_input), *(("radio", w) for w in at.radio),
               *(("slider", w) for w in at.select_slider), *(("toggle", w) for w in at.toggle)]
    kind, w = rng.choice(widgets)
    if kind == "text":
        now = w.value
        default = defaults.get(w.key, now)
        value = default if now != default and rng.random() < 0.3 else nearby(now, rng)
        if value == now:
            value = nearby(now, rng)
        w.set_value(value)
        return f"{w.label} = {value}"
    if kind == "radio":
        options = [o for o in w.options if o != w.value] or list(w.options)
        w.set_value(rng.choice(options))
        return f"{w.label} → {w.value}"
    if kind == "slider":
        options = list(w.options)
        i = options.index(str(w.value)) if str(w.value) in options else 0
        j = min(len(options) - 1, max(0, i + rng.choice((-1, 1))))
        w.set_value(type(w.value)(options[j]))
        return f"{w.label} → {options[j]}"
    w.set_value(not w.value)
    return f"{w.label} → {w.value}"


def shown(at: AppTest) -> list[str]:
    """What the page shows, as text: each figure's JSON (parsed: the same figure however its keys
    are ordered), each table, every text element; to check that a change of the code changed no
    number on the page (``--shown``)."""
    out = [json.dumps(json.loads(el.proto.spec), sort_keys=True) for el in at.get("plotly_chart")]
    out += [el.value.to_csv() for el in at.dataframe]
    for kind in ("markdown", "caption", "latex", "error", "warning", "info", "success", "metric", "code"):
        out += [f"{kind}: {getattr(el, 'value', '')}" for el in at.get(kind)]
    return out


def share_script_cache() -> None:
    """Compile the page once per process, as the server does: its ``Runtime`` keeps one
    ``ScriptCache`` (the script's bytecode, after Streamlit's "magic" rewrite of its syntax tree) for
    every session and rerun, while ``AppTest`` makes a new one for each run and so parses, rewrites
    and compiles the page on every change (about 19 ms of the priors page's 26 ms rerun)."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import local_script_runner

    shared = ScriptCache()
    local_script_runner.ScriptCache = lambda: shared  # type: ignore[assignment, attr-defined]


def walk(page: str, changes: int, seed: int, profile: int = 0,
         shown_to: Path | None = None, server_cache: bool = False) -> dict[str, Any]:
    """Run one page's walk in this process (from the checkout on ``sys.path``)."""
    if server_cache:
        share_script_cache()
    try:  # the suite's one-time scan of component manifests (tests/conftest.py), when it has one
        sys.path.insert(0, str(Path.cwd() / "tests"))
        import conftest  # noqa: F401
    except ImportError:
        pass
    rng = random.Random(seed)
    at = AppTest.from_file(str(Path.cwd() / PAGES[page]), default_timeout=600)
    c0 = time.process_time()
    at.run()
    first = time.process_time() - c0
    if at.exception:
        raise SystemExit(f"{page}: exception on opening: {at.exception[0].value}")
    c0 = time.process_time()
    at.run()
    rerun = time.process_time() - c0
    defaults = {w.key: w.value for w in at.text_input}
    profiler = cProfile.Profile() if profile else None
    costs: list[tuple[float, str]] = []
    pages: list[dict[str, Any]] = []
    for i in range(changes):
        what = change(at, rng, defaults)
        if profiler and i < profile:
            threading.setprofile(_profile_thread(profiler))  # the script runs in its own thread
        c0 = time.process_time()
        at.run()
        costs.append((time.process_time() - c0, what))
        threading.setprofile(None)  # type: ignore[arg-type]
        if at.exception:
            raise SystemExit(f"{page}: exception after {what}: {at.exception[0].value}")
        if shown_to:
            pages.append({"change": what, "shown": shown(at)})
    if shown_to:
        shown_to.write_text(json.dumps(pages, indent=0))
    result: dict[str, Any] = {"first": first, "rerun": rerun, "changes": costs}
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(70)
        result["profile"] = out.getvalue()
    return result


def _profile_thread(profiler: cProfile.Profile) -> Any:
    """A hook that hands a new thread (the script's) to ``profiler`` at its first event."""
    def start(*_: Any) -> None:
        sys.setprofile(None)
        profiler.enable()
    return start


def child(root: Path, page: str, args: argparse.Namespace) -> dict[str, Any]:
    """One page's walk in a fresh process, run from the checkout ``root``."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", page, "--changes", str(args.changes),
           "--seed", str(args.seed), "--profile", str(args.profile)] \
        + (["--server-cache"] if args.server_cache else [])
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{page} in {root}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def row(name: str, label: str, r: dict[str, Any]) -> str:
    ms = [c * 1e3 for c, _ in r["changes"]]
    return (f"| {name} | {label} | {r['rerun'] * 1e3:.0f} | {statistics.median(ms):.0f} | "
            f"{quantile(ms, 0.95):.0f} | {max(ms):.0f} | {TARGETS[name]} |")


def slowest(r: dict[str, Any]) -> str:
    top = sorted(r["changes"], reverse=True)[:3]
    return "; ".join(f"{c * 1e3:.0f} ms ({what})" for c, what in top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", nargs="+", choices=list(PAGES), default=list(PAGES))
    parser.add_argument("--changes", type=int, default=24)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--before", type=Path, help="another checkout (a worktree of main), run alternately")
    parser.add_argument("--profile", type=int, default=0, help="cProfile the first N changes and print it")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--server-cache", action="store_true",
                        help="compile each page once per process, as the server does (share_script_cache)")
    parser.add_argument("--shown", type=Path, help="with --child: what the page shows after each change")
    parser.add_argument("--child", choices=list(PAGES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(walk(args.child, args.changes, args.seed, args.profile, args.shown,
                              server_cache=args.server_cache)))
        return
    roots = [("after", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    rows, notes = [], []
    for name in args.pages:
        for label, root in reversed(roots):
            r = child(root, name, args)
            rows.append(row(name, label if args.before else "", r))
            notes.append(f"- {name}{f' ({label})' if args.before else ''}: {slowest(r)}")
            print(rows[-1], flush=True)
            if args.profile:
                print(r["profile"], flush=True)
    if args.profile:
        return
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=False).stdout.strip()
    text = "\n".join([
        "# CPU per widget change, in process (`python benchmarks/change_cpu.py`)",
        "",
        f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}, load average "
        f"{os.getloadavg()[0]:.1f} at the end; {args.changes} changes per page, seed {args.seed}"
        + ("; each page compiled once per process, as the server does (--server-cache)"
           if args.server_cache else "")
        + (f"; *after* is {commit}, *before* is the checkout given (same run, page by page, before first)"
           if args.before else f"; {commit}") + ".",
        "CPU ms (`time.process_time` of the process over `AppTest.run`): a rerun with nothing changed, "
        "then each change of the walk (cache misses included), and issue 20's target for its p95.",
        "",
        "| page | code | rerun, no change | change p50 | change p95 | change max | target p95 |",
        "|---|---|---:|---:|---:|---:|---:|",
        *rows,
        "",
        "Slowest changes:",
        "",
        *notes,
    ]) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    old = args.out.read_text() if args.out.exists() else ""
    if NOTES in old:  # the written analysis below the measured tables is kept
        text += "\n" + old[old.index(NOTES):]
    args.out.write_text(text)


if __name__ == "__main__":
    main()
