"""Measure the per-unit constants of the cost model in ``dpviz/budget.py`` on this machine.

Each unit is timed on a route that is dominated by it (best of ``--repeats`` runs, one core,
so that other load on the machine does not inflate it), divided by the count the cost model
uses for that route. Prints a table to paste into ``UNIT_SECONDS`` (rounded up to two
significant digits) and the measured/estimated ratio of a few end-to-end routes.

    python benchmarks/calibrate_budget.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from dpviz import budget  # noqa: E402
from dpviz.buckets import Buckets  # noqa: E402
from dpviz.budget import Budget  # noqa: E402
from dpviz.composition import homogeneous, optimal, parse_levels  # noqa: E402
from dpviz.composition.atoms import LossAtoms, binomial_atom_count, binomial_window  # noqa: E402
from dpviz.gce import exact  # noqa: E402
from dpviz.gce import hypotheses as H  # noqa: E402
from dpviz.mechanisms import routes  # noqa: E402
from dpviz.mechanisms.base import Accountable  # noqa: E402
from dpviz.mechanisms.registry import make  # noqa: E402
from dpviz.pld import accountant, discretize  # noqa: E402
from dpviz.views import mechanisms as mv  # noqa: E402

UNLIMITED = Budget(seconds=1e9, max_bytes=1e18)


def best(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def units(repeats: int) -> dict[str, float]:
    out: dict[str, float] = {}

    # binomial atoms: build, prefix sums, ε search (KOV Thm 3.3), k = 10^7 keeps ≈ 126,000 atoms
    def binom() -> None:
        binomial_window.cache_clear()
        LossAtoms.binomial(k=10_000_000, eps0=0.01, delta0=0.0).epsilon(1e-10)
    out["binomial_atom"] = best(binom, repeats) / binomial_atom_count(10_000_000, 0.01)

    # products of binomials: outer sums, argsort, prefix sums, search
    levels = parse_levels("0.1:0:2000,0.2:0:1000")
    n = optimal.atom_count(levels)

    def product() -> None:
        optimal.loss_atoms.__wrapped__(levels).epsilon(1e-6)
    out["product_atom"] = best(product, repeats) / (n * math.log2(n))

    # GCE count classes: 0⃗ against U(B∖{0⃗}) with δ0 > 0 (closed form g, (k+1)(k+2)/2 classes)
    k = 1000
    classes = (k + 1) * (k + 2) / 2

    def gce_classes() -> None:
        exact.exact_pair(H.point_zero(k=k), H.uniform_nonzero(k=k), eps0=0.1, delta0=1e-9,
                         budget=UNLIMITED).epsilon(1e-6)
    t_class = best(gce_classes, repeats)
    out["gce_class"] = t_class / classes

    # recursion cells: 0⃗ against a custom exchangeable prior with δ0 > 0, minus its classes
    k = 240
    w = np.full(k + 1, 1.0 / (k + 1))
    cells = (k + 1) * (k + 2) * (k + 3) / 6
    classes = (k + 1) * (k + 2) / 2

    def gce_cells() -> None:
        exact.exact_pair(H.point_zero(k=k), H.exchangeable(k=k, level_weights=w), eps0=0.1, delta0=1e-9,
                         budget=UNLIMITED).epsilon(1e-6)
    out["gce_cell"] = max(best(gce_cells, repeats) - classes * out["gce_class"], 0.0) / cells

    # threshold steps: U{|b|<3} against U{|b|≥3} at δ0 = 0 (two threshold priors, one O(k) walk)
    k = 20_000
    terms = k + 1

    def threshold() -> None:
        exact.exact_pair(H.below(k=k, k2=3), H.at_least(k=k, k2=3), eps0=0.1, delta0=0.0,
                         budget=UNLIMITED).epsilon(1e-6)
    out["gce_threshold_term"] = max(best(threshold, repeats) - (k + 1) * out["gce_class"], 0.0) / terms

    # convex hull of the exact region
    k = 700
    pair = exact.exact_pair(H.point_zero(k=k), H.uniform_nonzero(k=k), eps0=0.1, delta0=1e-9,
                            budget=UNLIMITED)
    points = 2 * (k + 1) * (k + 2) / 2
    out["gce_hull_point"] = best(pair.region, repeats) / points

    # PLD discretisation, per cell and discretisation (pessimistic and optimistic averaged)
    def per_cell(mech: Accountable, cells: int = 1 << 16) -> float:
        law = mech.law
        lo, hi = law.support(1e-15)
        h = (hi - lo) / cells
        both = best(lambda: (discretize.pessimistic(law, h=h), discretize.optimistic(law, h=h)), repeats)
        return both / (2 * ((hi - lo) / h + 3))
    out["pld_cell"] = max(per_cell(make("gaussian", sigma=0.9)),
                          per_cell(make("laplace", scale=2.0)))
    asym = sorted(per_cell(make(kind, **kw)) for kind, kw in (
        ("gaussian", {"sigma": 0.9, "sampling_rate": 0.01}),
        ("gaussian", {"sigma": 0.05, "sampling_rate": 0.5}),
        ("gaussian", {"sigma": 5.0, "sampling_rate": 0.001}),
        ("laplace", {"scale": 2.0, "sampling_rate": 0.1}),
        ("geometric", {"eps0": 0.5, "sampling_rate": 0.1})))
    print("asymmetric laws, s per cell:", " ".join(f"{x:.2e}" for x in asym))
    out["pld_cell_asymmetric"] = asym[len(asym) // 2]
    out["pld_atom_cell"] = per_cell(make("randomized-response", eps0=10.0))

    # FFT compositions: the whole compose minus its discretisations, per (bins · log2 bins · FFTs)
    law = make("gaussian", sigma=0.9).law  # symmetric: one direction
    lo, hi = law.support(1e-15)
    parts = [(law, 10_000)]
    h = 1e-3
    cells = 2 * ((hi - lo) / h + 3)
    est = accountant.cost(parts, h=h)
    fft_seconds = est.seconds - cells * budget.UNIT_SECONDS["pld_cell"]
    fft_units = fft_seconds / budget.UNIT_SECONDS["fft_bin_log"]
    t = best(lambda: accountant.compose(parts, h=h, budget=UNLIMITED), repeats)
    out["fft_bin_log"] = max(t - cells * out["pld_cell"], 0.0) / fft_units

    # δ(ε) evaluations on composed grids: a fixed part per grid and evaluation, and a part per atom
    # within one unit of loss above ε (≈ 1/h atoms), fitted from two widths
    per_eval = []
    eps = np.linspace(0.0, 15.0, 40)
    for h in (4e-3, 1e-3):
        composed = accountant.compose(parts, h=h, budget=UNLIMITED)
        grids = len(composed.upper) + len(composed.lower)
        t = best(lambda c=composed: [c.delta(float(e)) for e in eps], repeats)
        per_eval.append((h, t / (eps.size * grids)))
    (h1, t1), (h2, t2) = per_eval
    out["delta_eval_atom"] = max((t2 - t1) / (1 / h2 - 1 / h1), 0.0)
    out["delta_eval"] = max(t1 - out["delta_eval_atom"] / h1, 0.0)

    # privacy buckets (page size): the law put into buckets, then the convolutions
    law = make("gaussian", sigma=0.9, sampling_rate=0.01).law
    n = mv.PAGE_BUCKETS_N
    t = best(lambda: [Buckets.from_law(d, log_f=0.001, n=n) for d in law.both_directions()], repeats)
    out["bucket_cell"] = t / (2 * (2 * n + 1))
    b = Buckets.from_law(law, log_f=0.001, n=n)
    size = 4 * n + 2
    steps = 10_000 .bit_length() - 1 + bin(10_000).count("1") - 1
    t = best(lambda: b.self_compose(10_000, squaring=True), repeats)
    out["bucket_log"] = t / (steps * size * math.log2(size))
    return out


def check_routes(repeats: int) -> list[tuple[str, float, float]]:
    """(route, measured s, estimated s) with the constants now in dpviz/budget.py."""
    rows = []
    levels = homogeneous(k=10_000_000, eps0=1e-8, delta0=0.0)
    rows.append(("optimal, k = 10^7", best(lambda: optimal.loss_atoms.__wrapped__(levels).epsilon(1e-100),
                                           repeats), optimal.cost(levels).seconds))
    p0, p1 = H.point_zero(k=800), H.uniform_nonzero(k=800)
    rows.append(("GCE 0⃗ vs U(B∖0⃗), δ0 = 1e-9, k = 800",
                 best(lambda: exact.exact_pair(p0, p1, eps0=0.1, delta0=1e-9, budget=UNLIMITED).epsilon(1e-6),
                      repeats), exact.cost(p0, p1, delta0=1e-9).seconds))
    p0, p1 = H.below(k=3000, k2=3), H.at_least(k=3000, k2=3)
    rows.append(("GCE at-least:3, δ0 = 0, k = 3000",
                 best(lambda: exact.exact_pair(p0, p1, eps0=0.1, delta0=0.0, budget=UNLIMITED).epsilon(1e-6),
                      repeats), exact.cost(p0, p1, delta0=0.0).seconds))
    law = make("gaussian", sigma=1.1, sampling_rate=0.01).law
    rows.append(("PLD DP-SGD σ = 1.1, q = 0.01, k = 10^4, h = 2e-4",
                 best(lambda: accountant.compose([(law, 10_000)], h=2e-4, budget=UNLIMITED), repeats),
                 accountant.cost([(law, 10_000)], h=2e-4).seconds))
    mech = make("gaussian", sigma=1.1, sampling_rate=0.01)
    rows.append(("buckets, page size, k = 1000", best(lambda: routes.buckets([(mech, 1000)], delta=1e-5,
                                                                             n=mv.PAGE_BUCKETS_N), repeats),
                 routes.buckets_cost(mech, k=1000, n=mv.PAGE_BUCKETS_N).seconds))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for unit, seconds in units(args.repeats).items():
        rounded = float(f"{seconds:.2g}")
        print(f"{unit:22s} measured {seconds:.3e} s   in budget.py {budget.UNIT_SECONDS[unit]:.2e} s "
              f"(suggest {rounded:.2g})")
    print()
    for route, measured, estimated in check_routes(args.repeats):
        print(f"{route:52s} measured {measured:8.3f} s   estimated {estimated:8.3f} s   "
              f"ratio {measured / max(estimated, 1e-12):.2f}")


if __name__ == "__main__":
    main()
