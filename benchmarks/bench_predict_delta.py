"""δ at a target ε from a predicted width (``dpviz.pld.predict``'s ε target) against the pilot and its
refinement (``refine.PREDICT_EPSILON_TARGET`` = False, the route before), in one run.

The settings are ``bench_pilot``'s seeded draw (the Mechanisms page's δ-at-ε question: Gaussian,
Laplace, randomized response and discrete Gaussian; unsampled, Poisson or fixed-size; 1-30,000 steps;
ε from 0.05 to 30) and the page's own defaults around DP-SGD (σ = 1 to 4, q = 0.01 to 0.1, 800 to
5,000 steps), kept where a width can be predicted at all (laws with a continuous part: ``smooth``).
Each setting is answered three times by each route, alternating, each time on a fresh law (nothing
discretised yet, as on a page's first ask), and the fastest of the three is kept: CPU time of
``accountant.delta_bounds`` at the page's budget, the compiled scans loaded first. A second, wider
draw (``wide_settings``: the command line's ranges, small sampling rates and long compositions
included) is answered once per route. The report gives
both totals, the settings one route answers within the accuracy and the other not, and any pair of
intervals that do not overlap (both are certified: none may). Output:
``benchmarks/results/predict_delta.md``.

    python benchmarks/bench_predict_delta.py
"""

from __future__ import annotations

import math
import platform
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_pilot  # noqa: E402

from dpviz import jit  # noqa: E402
from dpviz.pld import refine  # noqa: E402
from dpviz.pld.predict import smooth  # noqa: E402
from dpviz.pld.refine import DEFAULT_ACCURACY  # noqa: E402
from dpviz.views import mechanisms as mv  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "predict_delta.md"
REPEATS = 3
PAGE_SETTINGS = [
    *(("gaussian", {"sigma": s, "sampling_rate": q}, k, e)
      for s, q, k, e in [(1.0, 0.01, 1000, 1.0), (1.0, 0.01, 1000, 0.5), (1.0, 0.01, 800, 1.0),
                         (1.0, 0.0125, 800, 2.0), (1.25, 0.0125, 800, 2.0), (2.5, 0.032, 1250, 4.0),
                         (4.0, 0.1, 5000, 10.0), (1.0, 0.02, 1000, 2.0)]),
    ("laplace", {"scale": 1.0, "sampling_rate": 0.01}, 1000, 1.0), ("laplace", {"scale": 2.0}, 50, 2.0)]
"""Around the Mechanisms page's defaults (Gaussian σ = 1, q = 0.01, 1,000 steps, "δ at ε = 1")."""
WIDE_SEED, WIDE_COUNT = 22, 200


def wide_settings(seed: int = WIDE_SEED, n: int = WIDE_COUNT) -> list[tuple[str, dict, int, float]]:
    """A wider draw, the command line's ranges: Gaussian σ or Laplace b log-uniform in [0.3, 20] and
    [0.1, 20], subsampled (q log-uniform in [1e-4, 1]) seven times in ten, 1-200,000 steps and ε in
    [0.01, 40], both log-uniform."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        kind = rng.choice(["gaussian", "laplace"])
        lo, hi = (0.3, 20.0) if kind == "gaussian" else (0.1, 20.0)
        values: dict = {"sigma" if kind == "gaussian" else "scale":
                        float(f"{math.exp(rng.uniform(math.log(lo), math.log(hi))):.4g}")}
        if rng.random() < 0.7:
            values["sampling_rate"] = float(f"{math.exp(rng.uniform(math.log(1e-4), 0.0)):.3g}")
        k = int(math.exp(rng.uniform(0.0, math.log(2e5))))
        out.append((kind, values, k, float(f"{math.exp(rng.uniform(math.log(0.01), math.log(40.0))):.4g}")))
    return out


def flagged(flag: str, on: bool, kind: str, values: dict, k: int, epsilon: float
            ) -> tuple[float, float | None, float | None]:
    """(CPU seconds, lower, upper) of δ at ``epsilon``, on a fresh law, with ``refine``'s switch
    ``flag`` set to ``on`` for the call."""
    saved = getattr(refine, flag)
    setattr(refine, flag, on)
    try:
        return bench_pilot.timed([(mv.make_mechanism(kind, values).law, k)], epsilon)
    finally:
        setattr(refine, flag, saved)


def ratio(lo: float | None, up: float | None) -> float:
    """Width over the width asked for (≤ 1: within the accuracy)."""
    if lo is None or up is None:
        return math.inf
    return 0.0 if up <= 0 else (up - lo) / (DEFAULT_ACCURACY * up)


def compare(settings: list[tuple[str, dict, int, float]], repeats: int, *,
            flag: str = "PREDICT_EPSILON_TARGET", smooth_only: bool = True) -> dict:
    """Both routes (``refine``'s switch ``flag`` on and off) on each setting (with ``smooth_only``,
    where a width can be predicted), the fastest of ``repeats`` runs each (alternating): totals,
    rows, the settings gained, lost and disjoint, and those whose intervals differ at all."""
    out: dict = {"rows": [], "totals": {True: 0.0, False: 0.0}, "lost": [], "gained": [], "disjoint": [],
                 "differ": [], "within": {True: 0, False: 0}}
    n = 0
    for kind, values, k, eps in settings:
        try:
            law = mv.make_mechanism(kind, values).law
        except Exception:  # a combination the registry refuses (named on the page): not a setting
            continue
        if smooth_only and not smooth([(law, k)]):
            continue
        order = [True, False] if n % 2 == 0 else [False, True]
        runs: dict[bool, list] = {True: [], False: []}
        for _ in range(repeats):
            for route in order:
                runs[route].append(flagged(flag, route, kind, values, k, eps))
        got = {route: min(runs[route]) for route in order}
        n += 1
        for route, (sec, _lo, _up) in got.items():
            out["totals"][route] += sec
        (s1, lo1, up1), (s0, lo0, up0) = got[True], got[False]
        name = f"{kind} {values} ×{k:,}, ε = {eps:g}"
        r1, r0 = ratio(lo1, up1), ratio(lo0, up0)
        out["within"][True] += r1 <= 1
        out["within"][False] += r0 <= 1
        if (lo1, up1) != (lo0, up0):
            out["differ"].append(name)
        if r0 <= 1 < r1:
            out["lost"].append(name)
        if r1 <= 1 < r0:
            out["gained"].append(name)
        if None not in (lo0, up0, lo1, up1) and (lo1 > up0 * (1 + 1e-12) or lo0 > up1 * (1 + 1e-12)):
            out["disjoint"].append(name)
        out["rows"].append(f"| {name} | {1e3 * s0:.1f} | {r0:.3g} | {1e3 * s1:.1f} | {r1:.3g} | "
                           f"{bench_pilot._f(lo1, up1)} |")
    out["n"] = n
    return out


def summary(label: str, r: dict) -> list[str]:
    return [f"{label}: {r['n']} settings.", "",
            f"- Total CPU: {r['totals'][False]:.2f} s from the pilot, {r['totals'][True]:.2f} s from the "
            "predicted width.",
            f"- Within the accuracy from the pilot but not from the prediction: {len(r['lost'])}"
            + "".join(f"; {x}" for x in r["lost"]) + ".",
            f"- Within it from the prediction but not from the pilot: {len(r['gained'])}"
            + "".join(f"; {x}" for x in r["gained"]) + ".",
            f"- Intervals that do not overlap: {len(r['disjoint'])}"
            + "".join(f"; {x}" for x in r["disjoint"]) + ".", ""]


HEADER = ["| setting | pilot ms | ratio | predicted ms | ratio | δ predicted [lower, upper] |",
          "|---|---:|---:|---:|---:|---|"]


def main() -> None:
    jit.compile_all()
    drawn = [s for seed in bench_pilot.SEEDS for s in bench_pilot.settings(seed, bench_pilot.PER_SEED)]
    page = compare([*drawn, *PAGE_SETTINGS], REPEATS)
    wide = compare(wide_settings(), 1)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    text = [
        "# δ at ε from a predicted width (`python benchmarks/bench_predict_delta.py`)", "",
        f"vm: {platform.machine()}, Python {platform.python_version()}; {commit}. Settings where a width can "
        "be predicted; CPU time of `accountant.delta_bounds` at the page's budget on a fresh law, the routes "
        f"alternating; *ratio*: the interval's relative width over the accuracy ({DEFAULT_ACCURACY:g}), ≤ 1 "
        "within it.", "",
        *summary(f"The page's draw (`bench_pilot`'s settings and {len(PAGE_SETTINGS)} around the Mechanisms "
                 f"page's defaults; the fastest of {REPEATS} runs per route)", page),
        *summary(f"A wider draw (the command line's ranges, `wide_settings`, seed {WIDE_SEED}; one run per "
                 "route)", wide),
        "Around the page's defaults:", "", *HEADER, *page["rows"][-len(PAGE_SETTINGS):], "",
        "The page's draw:", "", *HEADER, *page["rows"], "",
        "The wider draw:", "", *HEADER, *wide["rows"], "",
    ]
    OUT.write_text("\n".join(text))
    print("\n".join(text[:20]))


if __name__ == "__main__":
    main()
