"""The pilot width of a δ-at-ε refinement (``dpviz.pld.pilot``) against the rule before it, in one run.

The settings are a seeded draw from ranges, as the Mechanisms page's δ-at-ε question meets them:
Gaussian σ ∈ {0.1 … 4}, Laplace b ∈ {0.03 … 3}, randomized response ε0 ∈ {0.5 … 6}, discrete
Gaussian σ ∈ {0.5, 1, 2} with Δ ∈ {1, 4, 12, 48}; unsampled, Poisson-subsampled (q ∈ {0.001, 0.01,
0.1}) or fixed-size (m ∈ {100, 820} of 120,000); 1-30,000 steps; ε ∈ {0.05 … 30}. Each setting is
answered twice in the same process, the order alternating from setting to setting: with today's
pilot (at least 1/``PILOT_CELLS`` of the single step's support) and with ``PILOT_H`` alone, the rule
before it (``PILOT_CELLS`` = ∞). Times are CPU time of ``accountant.delta_bounds`` at the page's
budget, after one warm-up call of each; the compiled scans are loaded first, as a server does.
Both rules run with ``refine.PREDICT_EPSILON_TARGET`` off: since δ at ε of a law with a continuous
part starts from a predicted width (``bench_predict_delta.py``), the pilot is the start of the others
(atoms only, or no saddlepoint in the tail), and this benchmark measures the pilot's own rule.
The report gives the total and worst time of each rule, the settings one rule answers within the
accuracy and the other not, and any pair of intervals that do not overlap (both are certified: none
may). Output: ``benchmarks/results/pilot.md``.

    python benchmarks/bench_pilot.py            # 120 settings (two seeds of 60)
"""

from __future__ import annotations

import math
import platform
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpviz import jit  # noqa: E402
from dpviz.budget import PAGE  # noqa: E402
from dpviz.pld import accountant, pilot, refine  # noqa: E402
from dpviz.pld.refine import DEFAULT_ACCURACY  # noqa: E402
from dpviz.views import mechanisms as mv  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "pilot.md"
SEEDS = (2, 3)
PER_SEED = 60


def settings(seed: int, n: int) -> list[tuple[str, dict, int, float]]:
    """``n`` drawn (mechanism, parameters, k, ε) of the ranges in the module docstring."""
    rng = random.Random(seed)
    kinds = [("gaussian", lambda: {"sigma": rng.choice([0.1, 0.2, 0.3, 0.5, 1, 2, 4])}),
             ("laplace", lambda: {"scale": rng.choice([0.03, 0.1, 0.3, 1, 3])}),
             ("randomized-response", lambda: {"eps0": rng.choice([0.5, 1, 3, 6])}),
             ("discrete-gaussian", lambda: {"sigma": rng.choice([0.5, 1, 2]),
                                            "sensitivity": rng.choice([1, 4, 12, 48])})]
    out = []
    for _ in range(n):
        kind, make = rng.choice(kinds)
        values = make()
        scheme = rng.choice(["none", "poisson", "fixed"])
        if scheme == "poisson":
            values["sampling_rate"] = rng.choice([0.001, 0.01, 0.1])
        if scheme == "fixed":
            values.update(sampling="fixed-size", batch_size=rng.choice([100, 820]), dataset_size=120_000)
        k = rng.choice([1, 3, 10, 100, 781, 5000, 30_000])
        out.append((kind, values, k, rng.choice([0.05, 0.3, 0.625, 1.25, 3.0, 10.0, 30.0])))
    return out


def timed(parts: list, epsilon: float) -> tuple[float, float | None, float | None]:
    """(CPU seconds, lower, upper) of δ at ``epsilon`` at the page's budget."""
    t0 = time.process_time()
    g = accountant.delta_bounds(parts, epsilon=epsilon, budget=PAGE)
    return time.process_time() - t0, g.lower, g.upper


def answer(parts: list, epsilon: float, cells: float) -> tuple[float, float | None, float | None]:
    """``timed`` with ``PILOT_CELLS`` = ``cells``."""
    saved = pilot.PILOT_CELLS
    pilot.PILOT_CELLS = cells
    try:
        return timed(parts, epsilon)
    finally:
        pilot.PILOT_CELLS = saved


def _accurate(lo: float | None, up: float | None) -> bool:
    return lo is not None and up is not None and (up <= 0 or up - lo <= DEFAULT_ACCURACY * up)


def main() -> None:
    jit.compile_all()
    refine.PREDICT_EPSILON_TARGET = False  # the pilot's own rule (module docstring)
    rules = {"now": float(pilot.PILOT_CELLS), "before": math.inf}
    rows, totals, worst = [], dict.fromkeys(rules, 0.0), dict.fromkeys(rules, 0.0)
    lost, gained, disjoint = [], [], []
    n = 0
    for seed in SEEDS:
        for kind, values, k, eps in settings(seed, PER_SEED):
            try:
                parts = [(mv.make_mechanism(kind, values).law, k)]
            except Exception:  # a combination the registry refuses (named on the page): not a setting
                continue
            order = list(rules) if n % 2 == 0 else list(reversed(rules))
            for rule in order:
                answer(parts, eps, rules[rule])  # warm-up: lazy set-up and caches of this law
            got = {rule: answer(parts, eps, rules[rule]) for rule in order}
            n += 1
            name = f"{kind} {values} ×{k:,}, ε = {eps:g}"
            for rule, (s, _lo, _up) in got.items():
                totals[rule] += s
                worst[rule] = max(worst[rule], s)
            (s1, lo1, up1), (s0, lo0, up0) = got["now"], got["before"]
            if _accurate(lo0, up0) and not _accurate(lo1, up1):
                lost.append(name)
            if _accurate(lo1, up1) and not _accurate(lo0, up0):
                gained.append(name)
            if None not in (lo0, up0, lo1, up1) and (lo1 > up0 * (1 + 1e-12) or lo0 > up1 * (1 + 1e-12)):
                disjoint.append(name)
            rows.append(f"| {name} | {1e3 * s0:.1f} | {1e3 * s1:.1f} | {_f(lo1, up1)} |")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    text = [
        "# The pilot width of a δ-at-ε refinement (`python benchmarks/bench_pilot.py`)", "",
        f"vm: {platform.machine()}, Python {platform.python_version()}; {commit}. {n} settings (seeds "
        f"{', '.join(map(str, SEEDS))}); CPU time of `accountant.delta_bounds` at the page's budget, both "
        "rules in one process, alternating; module docstring for the ranges.", "",
        f"- Total CPU: {totals['before']:.2f} s with the rule before (`PILOT_H` = 0.05 alone), "
        f"{totals['now']:.2f} s now; the slowest setting {worst['before']:.2f} s before, "
        f"{worst['now']:.2f} s now.",
        f"- Within the accuracy ({DEFAULT_ACCURACY:g} relative) before but not now: {len(lost)}"
        + "".join(f"; {x}" for x in lost) + ".",
        f"- Within it now but not before: {len(gained)}" + "".join(f"; {x}" for x in gained) + ".",
        f"- Intervals that do not overlap: {len(disjoint)}" + "".join(f"; {x}" for x in disjoint) + ".", "",
        "| setting | before ms | now ms | δ now [lower, upper] |", "|---|---:|---:|---|", *rows, "",
    ]
    OUT.write_text("\n".join(text))
    print("\n".join(text[:8]))


def _f(lo: float | None, up: float | None) -> str:
    return "not computed" if lo is None or up is None else f"[{lo:.6g}, {up:.6g}]"


if __name__ == "__main__":
    main()
