"""δ at a target ε with a lower grid for the dominant direction only (``refine.DOMINANT_AT_EPSILON``,
``composed._dominant``) against a lower grid for every direction (the route before), in one run.

The settings are ``bench_predict_delta``'s: ``bench_pilot``'s seeded draw of the Mechanisms page's
δ-at-ε questions, the page's own defaults around DP-SGD, and the wider draw of the command line's
ranges; every law, also those without a predicted width. ``bench_predict_delta.compare`` answers
each setting twice by each route, alternating, on a fresh law each time (nothing discretised yet),
and keeps the faster of the two: CPU time of ``accountant.delta_bounds`` at the page's budget, the
compiled scans loaded first. Both routes must give the same interval, bit for bit (a direction left
out has its upper δ below the kept lower δ, so its lower end could not be the larger); the report
counts the settings where they differ. Output: ``benchmarks/results/lower_at_epsilon.md``.

    python benchmarks/bench_lower_at_epsilon.py
"""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_pilot  # noqa: E402
import bench_predict_delta  # noqa: E402

from dpviz import jit  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "lower_at_epsilon.md"
REPEATS = 2


def main() -> None:
    jit.compile_all()
    drawn = [s for seed in bench_pilot.SEEDS for s in bench_pilot.settings(seed, bench_pilot.PER_SEED)]
    settings = [*drawn, *bench_predict_delta.PAGE_SETTINGS, *bench_predict_delta.wide_settings()]
    r = bench_predict_delta.compare(settings, REPEATS, flag="DOMINANT_AT_EPSILON", smooth_only=False)
    totals, n = r["totals"], r["n"]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    text = [
        "# δ at ε: a lower grid for the dominant direction only "
        "(`python benchmarks/bench_lower_at_epsilon.py`)",
        "", f"vm: {platform.machine()}, Python {platform.python_version()}; {commit}. {n} settings "
        f"(`bench_predict_delta`'s); CPU time of `accountant.delta_bounds` at the page's budget on a fresh "
        f"law, the faster of {REPEATS} runs per route, alternating; *ratio*: the interval's relative width "
        "over the accuracy, ≤ 1 within it.", "",
        f"- Total CPU: {totals[False]:.2f} s with a lower grid for every direction, {totals[True]:.2f} s for "
        f"the dominant one ({totals[True] / totals[False]:.2f}×).",
        f"- Within the accuracy: {r['within'][False]} and {r['within'][True]} of {n}.",
        f"- Intervals that differ: {len(r['differ'])}" + "".join(f"; {x}" for x in r["differ"]) + ".", "",
        "| setting | every direction ms | ratio | dominant ms | ratio | δ [lower, upper] |",
        "|---|---:|---:|---:|---:|---|",
        *r["rows"], ""]
    OUT.write_text("\n".join(text))
    print("\n".join(text[:8]))


if __name__ == "__main__":
    main()
