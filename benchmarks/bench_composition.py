"""Exact optimal composition (dpviz) against Google's dp-accounting PLD, pure ε0-DP k-fold.

For each (ε0, k): ε at δ = 1e-5 from ``dpviz.composition.optimal.epsilon_for_delta``
(KOV Thm 3.3, exact binomial sum in log space) and from dp-accounting's privacy loss
distribution (``from_privacy_parameters(DifferentialPrivacyParameters(ε0, 0))
.self_compose(k).get_epsilon_for_delta(1e-5)``, default discretisation 1e-4, a
pessimistic discretisation, so its ε is an upper bound). Each timing is end to end
(build, compose, query), the median of ``--repeats`` runs, with dpviz's atom cache
cleared before every run. Writes ``benchmarks/results/composition.md`` and prints it.

    python benchmarks/bench_composition.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpviz.composition import homogeneous, optimal  # noqa: E402
from tests.oracles import mp_delta_opt  # noqa: E402  (independent 30-digit δ)

CASES = [(0.1, 1_000), (0.01, 10_000), (0.05, 100_000)]
DELTA = 1e-5
OUT = ROOT / "benchmarks" / "results" / "composition.md"


def dpviz_epsilon(eps0: float, k: int) -> float:
    optimal.forget()  # time the full computation, not a cache hit (atom sets remember their ε)
    g = optimal.epsilon_for_delta(homogeneous(k=k, eps0=eps0, delta0=0.0), delta=DELTA)
    return g.epsilon


def dp_accounting_epsilon(eps0: float, k: int) -> float:
    from dp_accounting.pld import privacy_loss_distribution
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    pld = privacy_loss_distribution.from_privacy_parameters(DifferentialPrivacyParameters(eps0, 0.0))
    return pld.self_compose(k).get_epsilon_for_delta(DELTA)


def timed(fn: Callable[[float, int], float], eps0: float, k: int, repeats: int) -> tuple[float, float]:
    """(value, median seconds) over ``repeats`` runs."""
    times, value = [], float("nan")
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn(eps0, k)
        times.append(time.perf_counter() - t0)
    return value, statistics.median(times)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per cell (median is reported)")
    args = parser.parse_args(argv)

    import dp_accounting

    dp_accounting_epsilon(0.1, 10)  # import and warm up both libraries outside the timings
    dpviz_epsilon(0.1, 10)
    rows = []
    for eps0, k in CASES:
        e_ours, t_ours = timed(dpviz_epsilon, eps0, k, args.repeats)
        e_dpa, t_dpa = timed(dp_accounting_epsilon, eps0, k, args.repeats)
        # The arbiter: the true δ at each returned ε, by the exact binomial sum in mpmath.
        over_ours = float(mp_delta_opt(k=k, eps0=eps0, delta0=0.0, eps=e_ours, dps=30)) / DELTA - 1
        over_dpa = float(mp_delta_opt(k=k, eps0=eps0, delta0=0.0, eps=e_dpa, dps=30)) / DELTA - 1
        rows.append(f"| {eps0:g} | {k:,} | {e_ours:.12g} | {e_dpa:.12g} | {(e_dpa - e_ours) / e_ours:+.2e} "
                    f"| {over_ours:+.1e} | {over_dpa:+.1e} "
                    f"| {_ms(t_ours)} | {_ms(t_dpa)} | {t_dpa / t_ours:,.0f}× |")

    dpa_version = getattr(dp_accounting, "__version__", None) or _dist_version("dp-accounting")
    lines = [
        "# Optimal composition: dpviz exact vs dp-accounting PLD",
        "",
        f"Pure ε0-DP, k-fold, ε at δ = {DELTA:g}. Times are end to end (build, compose, query), the",
        f"median of {args.repeats} runs, dpviz's atom cache cleared before each. dp-accounting "
        f"{dpa_version} with its defaults (value discretisation 1e-4, pessimistic rounding of the",
        "losses; tail truncation 1e-15). Relative difference = (ε_dp-accounting − ε_dpviz) / ε_dpviz.",
        "δ_true(ε)/δ − 1 is the true δ at the returned ε (exact binomial sum, 30-digit mpmath) relative",
        "to the target: > 0 means the ε is that much too small (unsound), < 0 that it is loose.",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, "
        "2 cores; produced by `python benchmarks/bench_composition.py`.",
        "",
        "| ε0 | k | ε dpviz (exact) | ε dp-accounting | rel. diff | δ_true/δ − 1 dpviz "
        "| δ_true/δ − 1 dp-acc. | dpviz ms | dp-accounting ms | speed-up |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
    ]
    text = "\n".join(lines)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(text)
    return 0


def _dist_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    raise SystemExit(main())
