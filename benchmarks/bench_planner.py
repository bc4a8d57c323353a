"""The planner's inverse questions (issue 9): time of every composition inverse, and DP-SGD noise
calibration at 10^4 steps against dp-accounting's ``mechanism_calibration`` in the same run.

Composition: for each method of ``dpviz.composition.METHODS`` and each case, the largest ε0
(``max_eps0``), the largest common factor of a two-level mix (``max_factor``) and the largest k
(``max_k``), median of ``--repeats`` runs with the optimum's atom cache cleared before each.
The exact optimum's largest k around issue 9's slow settings (answers in the millions): the
planner (``optimal_k``: two exact evaluations) against the generic search it replaces (ten), in
paired runs, with the answers compared.
DP-SGD: the smallest σ for q = 0.01, 10^4 and 10^5 steps, (ε, δ) = (1, 1e-5) by
``noise.smallest_noise`` (PLD route, certified upper ε ≤ 1 at the answer) and by dp-accounting's
``calibrate_dp_mechanism`` with its PLD accountant (default discretisation 1e-4, tol 1e-4); wall and
CPU seconds (the machine is shared: CPU time is the comparable one; issue 23's target is < 1 s).
Writes ``benchmarks/results/planner.md`` and prints it.

    python benchmarks/bench_planner.py [--repeats 3] [--skip-dp-accounting]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpviz.composition import METHODS, binomial_atoms, optimal, parse_levels  # noqa: E402
from dpviz.planner import composition, noise  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "planner.md"
CASES = [(10, 1.0, 1e-5), (100, 1.0, 1e-5), (1_000, 1.0, 1e-5), (10_000, 1.0, 1e-5), (100_000, 10.0, 1e-5)]
MIX = "0.1:1e-7:30,0.5:0:10"
LIMIT_MS = 50.0
STEPS, RATE, EPS, DELTA = (10_000, 100_000), 0.01, 1.0, 1e-5


def timed(fn: Callable[[], object], repeats: int) -> tuple[object, float]:
    """(result, median milliseconds), the optimum's atom and window caches cleared before each run."""
    times, out = [], None
    for _ in range(repeats):
        optimal.loss_atoms.cache_clear()
        binomial_atoms.binomial_window.cache_clear()
        t0 = time.perf_counter()
        out = fn()
        times.append(1e3 * (time.perf_counter() - t0))
    return out, statistics.median(times)


def composition_rows(repeats: int) -> list[str]:
    rows = ["| question | k | total (ε, δ) | " + " | ".join(METHODS) + " |",
            "|---|---:|---|" + "---:|" * len(METHODS)]
    for k, eps, delta in CASES:
        for question, call in (
                ("largest ε0", lambda m, k=k, e=eps, d=delta: composition.max_eps0(k=k, epsilon=e, delta=d,
                                                                                   methods=[m])),
                ("largest k (ε0 = ε/k)", lambda m, k=k, e=eps, d=delta: composition.max_k(
                    eps0=e / k, epsilon=e, delta=d, methods=[m]))):
            cells = []
            for m in METHODS:
                plans, ms = timed(lambda m=m, call=call: call(m), repeats)
                p = plans[m]  # type: ignore[index]
                value = "—" if not p.feasible else (
                    f"{int(p.value):,}" if p.name == "k" else f"{p.value:.6g}")
                flag = "" if ms < LIMIT_MS else " **>50**"
                cells.append(f"{value} ({ms:.1f} ms{flag})")
            rows.append(f"| {question} | {k:,} | ({eps:g}, {delta:g}) | " + " | ".join(cells) + " |")
    levels = parse_levels(MIX)
    cells = []
    for m in METHODS:
        plans, ms = timed(lambda m=m: composition.max_factor(levels, epsilon=1.0, delta=1e-5, methods=[m]),
                          repeats)
        flag = "" if ms < LIMIT_MS else " **>50**"
        cells.append(f"{plans[m].value:.6g} ({ms:.1f} ms{flag})")  # type: ignore[index]
    rows.append(f"| factor of {MIX} | 40 | (1, 1e-05) | " + " | ".join(cells) + " |")
    return rows


K_GRID = [(eps0, eps, delta) for eps0 in (3e-5, 1e-4, 3e-4) for eps in (1.0, 3.0, 10.0)
          for delta in (1e-5, 1e-10)]


def optimum_k_rows(repeats: int) -> list[str]:
    """Largest k of the exact optimum: the planner against the generic search (paired runs)."""
    rows = ["| ε0 | total (ε, δ) | largest k | planner | generic search | same plan |",
            "|---:|---|---:|---:|---:|---|"]
    for eps0, eps, delta in K_GRID:
        def ask(eps0: float = eps0, eps: float = eps, delta: float = delta) -> dict:
            plans = composition.max_k(eps0=eps0, epsilon=eps, delta=delta, methods=["optimal"])
            return plans["optimal"].to_json()

        fast, ms_fast = timed(ask, repeats)
        saved = composition.optimal  # the generic search: the module no longer recognises the optimum
        composition.optimal = None  # type: ignore[assignment]
        try:
            slow, ms_slow = timed(ask, repeats)
        finally:
            composition.optimal = saved
        k = fast["k"]  # type: ignore[index]
        flag = "" if ms_fast < LIMIT_MS else " **>50**"
        same = "yes" if fast == slow else "**no**"
        rows.append(f"| {eps0:g} | ({eps:g}, {delta:g}) | {k:,} | {ms_fast:.1f} ms{flag} | "
                    f"{ms_slow:.1f} ms | {same} |")
    return rows


def dp_accounting_sigma(steps: int) -> float:
    import dp_accounting
    from dp_accounting import mechanism_calibration as mc
    from dp_accounting.pld import pld_privacy_accountant as pa

    def event(sigma: float) -> dp_accounting.DpEvent:
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(RATE, dp_accounting.GaussianDpEvent(sigma)), steps)

    return mc.calibrate_dp_mechanism(pa.PLDAccountant, event, EPS, DELTA, mc.LowerEndpointAndGuess(0.3, 3.0),
                                     tol=1e-4)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-dp-accounting", action="store_true")
    args = ap.parse_args()
    load = os.getloadavg()
    rows = composition_rows(args.repeats)
    k_rows = optimum_k_rows(args.repeats)
    load_after = os.getloadavg()
    lines = ["# Planner benchmark (issue 9)", "",
             f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared), "
             f"Python {platform.python_version()}; median of {args.repeats} runs, cold atom and window "
             f"caches; load average (1, 5, 15 min) {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} before the "
             f"composition rows, {load_after[0]:.2f}, {load_after[1]:.2f}, {load_after[2]:.2f} after.", "",
             "## Composition inverses (value, time per method; limit 50 ms)", "", *rows, "",
             "## The exact optimum's largest k: planner against the generic search (paired runs)", "",
             *k_rows, ""]
    lines += ["## DP-SGD noise calibration: q = 0.01, (ε, δ) = (1, 1e-5)", "",
              "| steps | calibration | σ | certified upper ε at σ | σ × (1 − 1e-4): ε bracket | wall s "
              "| CPU s |",
              "|---:|---|---:|---:|---|---:|---:|"]
    ratios = []
    for steps in STEPS:
        t0, c0 = time.perf_counter(), time.process_time()
        plan = noise.smallest_noise("gaussian", k=steps, epsilon=EPS, delta=DELTA, sampling_rate=RATE)
        ours, ours_cpu = time.perf_counter() - t0, time.process_time() - c0
        lines.append(f"| {steps:,} | dpviz `plan noise gaussian` (PLD route) | {plan.value:.6f} | "
                     f"{plan.check.upper:.6f} | [{plan.beyond.lower:.6f}, {plan.beyond.upper:.6f}] | "  # type: ignore[union-attr]
                     f"{ours:.2f} | {ours_cpu:.2f} |")
        if not args.skip_dp_accounting:
            t0, c0 = time.perf_counter(), time.process_time()
            ref = dp_accounting_sigma(steps)
            theirs, theirs_cpu = time.perf_counter() - t0, time.process_time() - c0
            lines.append(f"| {steps:,} | dp-accounting `calibrate_dp_mechanism` (PLDAccountant, tol 1e-4) | "
                         f"{ref:.6f} | — | — | {theirs:.2f} | {theirs_cpu:.2f} |")
            ratios.append(f"{steps:,} steps: CPU time ratio dpviz / dp-accounting "
                          f"**{ours_cpu / theirs_cpu:.3f}**, σ ratio {plan.value / ref:.6f}")  # type: ignore[operator]
    if ratios:
        lines += ["", *(f"- {r}" for r in ratios)]
    lines.append("")
    text = "\n".join(lines)
    OUT.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
