"""Server-side rerun time of the Mechanisms page, per widget, at defaults and at 10^5 steps (issue 8).

    python benchmarks/page_latency_mechanisms.py        # writes benchmarks/results/page_latency_mechanisms.md
    python benchmarks/page_latency_mechanisms.py --repeats 5 --label after

The page runs in Streamlit's ``AppTest`` (the script, its caches and the figures' serialisation, as
under ``streamlit run``, without browser and network; ``benchmarks/page_latency.py`` does the same for
every page with random changes). For each setting (the defaults; the defaults with k = 10^5 steps) and
each input of the page, the input is set to a nearby value (``page_latency.nearby``: numbers scaled by
0.5–2; a radio gets another option), the rerun is timed, and the input is set back (that rerun is not
timed: it is a cache hit). p50/p95 are over all widgets' changes of a setting, and the table gives
each widget's median too.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from page_latency import nearby, quantiles  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "page_latency_mechanisms.md"
PAGE = "pages/4_Mechanisms.py"
SETTINGS = {"defaults": {}, "k = 10^5": {"k": "100000"}}


def _inputs(at: AppTest) -> list[tuple[str, object]]:
    """(name, widget) for every keyed text input, radio and toggle of the page (the editors aside)."""
    found = [(f"text {w.key}", w) for w in at.text_input if w.key]
    found += [(f"radio {w.key}", w) for w in at.radio if w.key]
    found += [(f"toggle {w.key}", w) for w in at.toggle if w.key]
    return found


ERRORS: list[str] = []
"""Changes whose rerun raised (the page showed an exception): counted and listed, not timed away."""


def _timed(at: AppTest, what: str = "cold run") -> float:
    t0 = time.perf_counter()
    at.run()
    dt = time.perf_counter() - t0
    if at.exception:
        ERRORS.append(f"{what}: {str(at.exception[0].value).splitlines()[0][:120]}")
    return dt


def measure(params: dict[str, str], repeats: int, seed: int) -> dict:
    """Cold run, then ``repeats`` changes of each input (each set back afterwards)."""
    rng = random.Random(seed)
    at = AppTest.from_file(str(ROOT / PAGE), default_timeout=900)
    for key, value in params.items():
        at.query_params[key] = value
    cold = _timed(at)
    per: dict[str, list[float]] = {}
    names = [name for name, _ in _inputs(at)]  # the default mechanism's inputs
    for _ in range(repeats):
        for name in names:
            w = dict(_inputs(at))[name]
            old = w.value
            if name.startswith("radio"):
                w.set_value(rng.choice([o for o in w.options if o != old]))
            elif name.startswith("toggle"):
                w.set_value(not old)
            else:
                w.set_value(nearby(str(old), rng))
            what = f"{name} {old!r} → {dict(_inputs(at))[name].value!r}"
            per.setdefault(name, []).append(_timed(at, what))
            dict(_inputs(at))[name].set_value(old)
            at.run()  # back to the setting (a cache hit, not timed)
    return {"cold": cold, "per": per}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="changes per widget and setting (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--label", default="", help="a heading for this run (e.g. before / after)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--append", action="store_true", help="append to --out instead of replacing it")
    args = parser.parse_args()
    lines = []
    for setting, params in SETTINGS.items():
        r = measure(params, args.repeats, args.seed)
        times = [t for ts in r["per"].values() for t in ts]
        p50, p95, worst = quantiles(times)
        widgets = ", ".join(f"{name.split()[1]} {statistics.median(ts) * 1e3:.0f}"
                            for name, ts in r["per"].items())
        lines.append(f"| {setting} | {r['cold'] * 1e3:.0f} | {p50 * 1e3:.0f} | {p95 * 1e3:.0f} | "
                     f"{worst * 1e3:.0f} | {len(times)} | {widgets} |")
        print(lines[-1], flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    text = "\n".join([
        f"## {args.label or 'Mechanisms page latency'} (`python benchmarks/page_latency_mechanisms.py`)",
        "",
        f"{platform.node()}: {os.cpu_count()} cores, load average {load:.1f} at the end, Python "
        f"{platform.python_version()}; {args.repeats} changes per widget and setting, seed {args.seed}. "
        "Times in ms on the server (AppTest): the first run in a fresh process, then each change.",
        "",
        "| setting | cold | change p50 | change p95 | slowest | changes | median per widget |",
        "|---|---:|---:|---:|---:|---:|---|",
        *lines,
        "",
        f"Reruns that raised: {len(ERRORS)}" + "".join(f"\n- {e}" for e in ERRORS),
    ]) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.append and args.out.exists():
        text = args.out.read_text() + "\n" + text
    elif not args.append:
        text = "# Mechanisms page latency, server side\n\n" + text
    args.out.write_text(text)


if __name__ == "__main__":
    main()
