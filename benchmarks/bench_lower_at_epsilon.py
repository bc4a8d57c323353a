"""δ at a target ε with a lower grid for the dominant direction only (``refine.DOMINANT_AT_EPSILON``,
``composed._dominant``) against a lower grid for every direction (the route before), in one run.

The settings are ``bench_predict_delta``'s: ``bench_pilot``'s seeded draw of the Mechanisms page's
δ-at-ε questions, the page's own defaults around DP-SGD, and the wider draw of the command line's
ranges; every law, also those without a predicted width. Each setting is answered twice by each
route, alternating, on a fresh law each time (nothing discretised yet), and the faster of the two is
kept: CPU time of ``accountant.delta_bounds`` at the page's budget, the compiled scans loaded first.
Both routes must give the same interval, bit for bit (a direction left out has its upper δ below the
kept lower δ, so its lower end could not be the larger); the report counts the settings where they
differ. Output: ``benchmarks/results/lower_at_epsilon.md``.

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
from dpviz.views import mechanisms as mv  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "lower_at_epsilon.md"
REPEATS = 2


def answer(kind: str, values: dict, k: int, epsilon: float, dominant: bool) -> tuple[float, float | None,
                                                                                     float | None]:
    """(CPU seconds, lower, upper) of δ at ``epsilon`` on a fresh law, by the route asked for."""
    return bench_predict_delta.flagged("DOMINANT_AT_EPSILON", dominant, kind, values, k, epsilon)


def main() -> None:
    jit.compile_all()
    drawn = [s for seed in bench_pilot.SEEDS for s in bench_pilot.settings(seed, bench_pilot.PER_SEED)]
    settings = [*drawn, *bench_predict_delta.PAGE_SETTINGS, *bench_predict_delta.wide_settings()]
    totals = {True: 0.0, False: 0.0}
    within = {True: 0, False: 0}
    rows, differ = [], []
    for n, (kind, values, k, eps) in enumerate(settings):
        try:
            mv.make_mechanism(kind, values)
        except Exception:  # a combination the registry refuses (named on the page): not a setting
            continue
        order = [True, False] if n % 2 == 0 else [False, True]
        runs: dict[bool, list] = {True: [], False: []}
        for _ in range(REPEATS):
            for route in order:
                runs[route].append(answer(kind, values, k, eps, route))
        got = {route: min(runs[route], key=lambda r: r[0]) for route in order}
        for route, (sec, lo, up) in got.items():
            totals[route] += sec
            within[route] += bench_predict_delta.ratio(lo, up) <= 1
        name = f"{kind} {values} ×{k:,}, ε = {eps:g}"
        (s1, lo1, up1), (s0, lo0, up0) = got[True], got[False]
        if (lo1, up1) != (lo0, up0):
            differ.append(name)
        r1 = bench_predict_delta.ratio(lo1, up1)
        rows.append(f"| {name} | {1e3 * s0:.1f} | {1e3 * s1:.1f} | {r1:.3g} | {bench_pilot._f(lo1, up1)} |")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    text = [
        "# δ at ε: a lower grid for the dominant direction only "
        "(`python benchmarks/bench_lower_at_epsilon.py`)",
        "", f"vm: {platform.machine()}, Python {platform.python_version()}; {commit}. {len(rows)} settings "
        f"(`bench_predict_delta`'s); CPU time of `accountant.delta_bounds` at the page's budget on a fresh "
        "law, "
        f"the faster of {REPEATS} runs per route, alternating; *ratio*: the interval's relative width over "
        "the accuracy, ≤ 1 within it.", "",
        f"- Total CPU: {totals[False]:.2f} s with a lower grid for every direction, {totals[True]:.2f} s for "
        f"the dominant one ({totals[True] / totals[False]:.2f}×).",
        f"- Within the accuracy: {within[False]} and {within[True]} of {len(rows)}.",
        f"- Intervals that differ: {len(differ)}" + "".join(f"; {x}" for x in differ) + ".", "",
        "| setting | every direction ms | dominant ms | ratio | δ [lower, upper] |",
        "|---|---:|---:|---:|---|",
        *rows, ""]
    OUT.write_text("\n".join(text))
    print("\n".join(text[:8]))


if __name__ == "__main__":
    main()
