"""Server-side rerun time per page: cold load, then widget changes as a person makes them.

    python benchmarks/page_latency.py                 # writes benchmarks/results/page_latency.md
    python benchmarks/page_latency.py --changes 40 --pages regions curves

Each page runs in Streamlit's ``AppTest`` (the same script, caches and serialisation of the
figures as ``streamlit run``, without the browser and the network). A change sets one input
to a nearby value (numbers scaled by 0.5–2, integers kept whole, a random option for radios,
sliders and toggles) and times ``run()``: the server's part of what a user waits for, as wall time
and as CPU time (which other jobs on the machine do not inflate). The
round trip over the websocket, many sessions at once, is measured by ``benchmarks/load/run.py``.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import statistics
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "benchmarks" / "results" / "page_latency.md"
PAGES = {"home": "app.py", "regions": "pages/1_Privacy_regions.py", "curves": "pages/2_Composition_curves.py",
         "priors": "pages/3_Database_priors.py", "mechanisms": "pages/4_Mechanisms.py"}


def nearby(text: str, rng: random.Random) -> str:
    """A value a person might try next: numbers scaled by 0.5–2, whole numbers kept whole."""
    try:
        x = float(text)
    except ValueError:
        return text
    factor = rng.choice((0.5, 0.8, 1.25, 2.0))
    if re.fullmatch(r"\d+", text.strip()):
        return str(max(1, round(x * factor)))
    return f"{x * factor:.4g}"


def _change(at: AppTest, rng: random.Random) -> str:
    """Change one input and return a short description; the caller times ``run()``."""
    widgets = [*(("text", w) for w in at.text_input), *(("radio", w) for w in at.radio),
               *(("slider", w) for w in at.select_slider), *(("toggle", w) for w in at.toggle)]
    if not widgets:
        return "nothing (no inputs)"
    kind, w = rng.choice(widgets)
    if kind == "text":
        w.set_value(nearby(w.value, rng))
    elif kind == "radio":
        w.set_value(rng.choice(list(w.options)))
    elif kind == "slider":
        w.set_value(type(w.value)(rng.choice(list(w.options))))
    else:
        w.set_value(not w.value)
    return f"{kind} {w.label!r}"


def quantiles(xs: list[float]) -> tuple[float, float, float]:
    s = sorted(xs)
    return statistics.median(s), s[min(len(s) - 1, int(0.95 * len(s)))], s[-1]


def measure(path: str, changes: int, seed: int) -> dict:
    rng = random.Random(seed)
    at = AppTest.from_file(str(ROOT / path), default_timeout=600)
    t0 = time.perf_counter()
    at.run()
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    at.run()
    same = time.perf_counter() - t0
    times, cpu, slowest = [], [], ("", 0.0)
    for _ in range(changes):
        what = _change(at, rng)
        t0, c0 = time.perf_counter(), time.process_time()
        at.run()
        dt = time.perf_counter() - t0
        times.append(dt)
        cpu.append(time.process_time() - c0)
        if dt > slowest[1]:
            slowest = (what, dt)
        if at.exception:
            raise SystemExit(f"{path}: exception after {what}: {at.exception[0].value}")
    return {"cold": cold, "same": same, "times": times, "cpu": cpu, "slowest": slowest}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--changes", type=int, default=30, help="widget changes per page (default 30)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pages", nargs="*", default=list(PAGES), choices=list(PAGES))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = []
    for name in args.pages:
        r = measure(PAGES[name], args.changes, args.seed)
        p50, p95, worst = quantiles(r["times"])
        c50, c95, _ = quantiles(r["cpu"])
        rows.append(f"| {name} | {r['cold'] * 1e3:.0f} | {r['same'] * 1e3:.0f} | {p50 * 1e3:.0f} | "
                    f"{p95 * 1e3:.0f} | {c50 * 1e3:.0f} | {c95 * 1e3:.0f} | "
                    f"{worst * 1e3:.0f} ({r['slowest'][0]}) |")
        print(rows[-1], flush=True)
    text = "\n".join([
        "# Page latency, server side (`python benchmarks/page_latency.py`)",
        "",
        f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"{args.changes} random widget changes per page, seed {args.seed}; load average "
        f"{os.getloadavg()[0]:.1f} at the end. Times in ms: the first run in a fresh process (imports "
        "included), a rerun with nothing changed, and each change, as wall time and as the process's "
        "CPU time (the script's thread and the test harness: on a shared machine, the wall time also "
        "holds the waits for a core).",
        "",
        "| page | cold | rerun, no change | change p50 | change p95 | CPU p50 | CPU p95 | slowest change |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
        *rows,
    ]) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
