"""PLD engine against dp-accounting 0.6.0 over a spread of settings (issue 8).

Each setting runs twice, each in a fresh subprocess: dpviz's certified interval
(``dpviz.pld.accountant.epsilon_bounds``, default accuracy) and dp-accounting's connect-the-dots
value (``PLDAccountant``, value_discretization_interval = 1e-4), one after the other on the same
machine in the same run. Times are wall time of the call alone, after one small warm-up call of the
same library (imports and first-call set-up excluded); peak memory is
the dpviz subprocess's peak RSS (``resource.getrusage``, imports included, ≈ 150 MiB of it).
Output: ``benchmarks/results/pld_grid.md`` and ``pld_grid.json``.

    python benchmarks/bench_pld_grid.py            # all settings (≈ 10–15 min on 2 loaded cores)
    python benchmarks/bench_pld_grid.py --quick    # a few (written to pld_grid_partial.*)
    python benchmarks/bench_pld_grid.py 16 17      # settings by index (pld_grid_partial.*)
    python benchmarks/bench_pld_grid.py --render   # pld_grid.md again from pld_grid.json
"""

from __future__ import annotations

import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results"

GAUSS = [  # (q, sigma, steps, delta): a spread over q, σ, steps and δ with realistic ε (≤ ~100)
    (1.0, 1.0, 100, 1e-5), (1.0, 2.0, 100, 1e-10), (1.0, 5.0, 1000, 1e-5), (1.0, 5.0, 100, 1e-10),
    (0.1, 0.6, 100, 1e-10), (0.1, 1.0, 1000, 1e-5), (0.1, 2.0, 10_000, 1e-10), (0.1, 5.0, 100_000, 1e-5),
    (0.01, 0.6, 1000, 1e-5), (0.01, 1.0, 10_000, 1e-10), (0.01, 2.0, 100_000, 1e-5), (0.01, 5.0, 100, 1e-10),
    (0.001, 0.6, 10_000, 1e-10), (0.001, 1.0, 100_000, 1e-5), (0.001, 2.0, 1_000_000, 1e-10),
    (0.001, 5.0, 1000, 1e-5),
    (1e-4, 0.6, 100_000, 1e-5), (1e-4, 1.0, 1_000_000, 1e-10), (1e-4, 2.0, 10_000, 1e-5),
    (1e-4, 5.0, 100, 1e-10),
    (0.0025, 1.3, 6000, 1e-5), (0.001, 1.0, 30_000, 1e-7), (0.004, 1.0, 100_000, 1e-6),
    (0.01, 1.1, 10_000, 1e-5),
]
OTHER = [  # (kind, parameter, q, steps, delta)
    ("laplace", 0.5, 0.2, 3, 1e-14), ("laplace", 1.0, 1.0, 100, 1e-15), ("laplace", 2.0, 0.1, 1000, 1e-10),
    ("rr", 0.1, 1.0, 30, 1e-12), ("rr", 1.0, 1.0, 1000, 1e-15), ("rr", 0.5, 1.0, 10_000, 1e-10),
    ("geometric", 0.5, 1.0, 100, 1e-15), ("geometric", 1.0, 0.05, 1000, 1e-10),
]


def _law(setting):
    from dpviz.mechanisms import gaussian, geometric, laplace
    from dpviz.mechanisms import randomized_response as rr
    from dpviz.mechanisms.subsampling import subsample_remove
    if setting[0] == "gaussian":
        _, q, sigma, k, delta = setting
        base = gaussian.loss_law(sigma=sigma)
    else:
        kind, x, q, k, delta = setting
        base = {"laplace": lambda: laplace.loss_law(scale=x), "rr": lambda: rr.loss_law(eps0=x),
                "geometric": lambda: geometric.loss_law(eps0=x)}[kind]()
    law = base if q == 1.0 else subsample_remove(base, rate=q)
    return law, k, delta


def _reference(setting) -> float:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.pld import privacy_loss_distribution as ref_pld
    if setting[0] != "gaussian":
        kind, x, q, k, delta = setting
        if kind == "geometric":
            pld = ref_pld.from_discrete_laplace_mechanism(x, sensitivity=1, sampling_prob=q,
                                                          value_discretization_interval=1e-4,
                                                          use_connect_dots=True)
        elif kind == "laplace":
            pld = ref_pld.from_laplace_mechanism(x, sampling_prob=q, value_discretization_interval=1e-4)
        else:  # randomized response, 2 categories, ε0 = x (noise parameter p: e^{ε0} = (1 − p/2)/(p/2))
            pld = ref_pld.from_randomized_response(2.0 / (1.0 + math.exp(x)), 2,
                                                   value_discretization_interval=1e-4)
        return float(pld.self_compose(k).get_epsilon_for_delta(delta))
    _, q, sigma, k, delta = setting
    event = dp_accounting.GaussianDpEvent(sigma)
    if q < 1.0:
        event = dp_accounting.PoissonSampledDpEvent(q, event)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(event, k)
    return float(acc.get_epsilon(delta))


def _warm_up(which: str) -> None:
    """One small call first, so that lazy imports and first-call set-up are not timed."""
    if which == "ref":
        _reference(("gaussian", 0.1, 1.0, 2, 1e-5))
        _reference(("laplace", 1.0, 1.0, 2, 1e-5))
    else:
        one_law, _, _ = _law(("gaussian", 0.1, 1.0, 2, 1e-5))
        from dpviz.pld.accountant import epsilon_bounds
        epsilon_bounds([(one_law, 2)], delta=1e-5)


def one(which: str, setting) -> dict:
    _warm_up(which)
    if which == "ref":
        t0 = time.perf_counter()
        try:
            ref = _reference(setting)
        except Exception as exc:
            ref = None
            print(f"reference failed: {exc}", file=sys.stderr)
        return {"ref": ref, "ref_s": time.perf_counter() - t0,
                "ref_peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    from dpviz.pld.accountant import epsilon_bounds
    law, k, delta = _law(setting)
    t0 = time.perf_counter()
    g = epsilon_bounds([(law, k)], delta=delta)
    t_dpviz = time.perf_counter() - t0
    return {"setting": list(setting), "lower": g.lower, "upper": g.upper, "status": g.status.value,
            "reason": g.reason, "detail": g.detail, "dpviz_s": t_dpviz,
            "peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def _run(which: str, setting) -> dict | None:
    cmd = [sys.executable, __file__, "--one", which, json.dumps(setting)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=900,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    if proc.returncode != 0:
        print(setting, which, proc.stderr[-800:], file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _f(v: float | None) -> str:
    return "–" if v is None else f"{v:.6g}"


def _row(r) -> tuple[str, dict]:
    s = r["setting"]
    name = (f"Gaussian q={s[1]:g} σ={s[2]:g} k={s[3]:,} δ={s[4]:g}" if s[0] == "gaussian"
            else f"{s[0]} {s[1]:g} q={s[2]:g} k={s[3]:,} δ={s[4]:g}")
    lo, up, ref = r["lower"], r["upper"], r["ref"]
    ok = {}
    if lo is not None and up is not None:
        width = up - lo
        # dp-accounting's pessimistic value is itself an upper bound: consistent when it is not below
        # dpviz's certified lower end (inside the interval, or above it where dpviz is tighter)
        ok["contains"] = ref is not None and lo <= ref * (1 + 1e-9)
        ok["width"] = width <= 1e-3 * max(up, 0.1)
        rel = width / up if up > 0 else 0.0
    else:
        width = rel = math.nan
        ok["contains"] = ok["width"] = False
    ok["time"] = r["dpviz_s"] <= r["ref_s"]
    ok["memory"] = r["peak_bytes"] < 1 << 30
    ratio = r["dpviz_s"] / r["ref_s"] if r["ref_s"] else math.nan
    misses = " ".join(k for k, v in ok.items() if not v) or "–"
    line = (f"| {name} | [{_f(lo)}, {_f(up)}] | {_f(ref)} | {rel:.2e} | {r['dpviz_s']:.2f} | "
            f"{r['ref_s']:.2f} | {ratio:.2f} | {r['peak_bytes'] / 2**20:.0f} | {misses} | "
            f"{r['reason'] or r['detail']} |")
    return line, ok


NOTES = """
## Settings that miss a target, and why

- **contains**: where dp-accounting's h = 1e-4 value is below dpviz's certified lower end, its own value
  moves by more than the gap as its grid is refined, in both directions (not an upper bound there: its
  FFT round-off and tail truncation are not accounted for). Measured on the engine of this script's
  commit: q = 0.01, σ = 1, 10⁴ steps, δ = 1e-10: dp-accounting 9.31517 (h = 1e-4), 9.31782 (5e-5),
  9.31564 (2.5e-5); dpviz at fixed h = 1e-4 gives [9.316068, 9.316193]. q = 0.001, σ = 0.6, 10⁴ steps,
  δ = 1e-10: 5.80751, 5.80615, 5.80733; dpviz's remove direction alone, whose round-off bound is
  3.5e-15 against δ, gives [5.80755, 5.80774] at h = 1.2e-4. q = 0.001, σ = 2, 10⁶ steps, δ = 1e-10:
  3.32049, 3.32571, 3.32865 (h = 1e-4, 5e-5, 2.5e-5); the Rényi-DP route gives 3.4775.
- **width**: see the table; the engine aims at relative width 1e-3 (1e-4 absolute below ε = 0.1).
  Earlier misses and their causes (fixed): a law's support cut at the first power of two past its
  tail (a q = 1e-4 step spanned to loss 1); the lower grid's top-down scan leaving a subsampled law's
  density spike at ln(1 − q) stored up to h below its loss, and a 1e-9 margin per symbol (both carried
  by all k steps); the upper end read at the round-off of the error-free ε; one FFT per product, whose
  round-off bound is set by the single step's peak and carried by all k/2 later copies.
- Where dp-accounting's value is far above dpviz's upper end (q ≤ 0.001 with ε < 0.02, Laplace at δ = 1e-15,
  randomized response at k = 1000), dp-accounting's h = 1e-4 grid is coarse against the answer (ε ≈ 100·h)
  or against the single step's spread; its value is a valid but loose upper bound. Geometric at δ = 1e-15:
  dp-accounting returns ∞.
- **time**: dpviz composes four grids (both directions × both bounds) by repeated squaring and refines
  h until the interval is within the accuracy (a pilot, a tilted rerun only where round-off widens it
  by a fifth of the target, refinements by the h² law); dp-accounting computes one pessimistic grid per
  direction with a single FFT power and no error bound. dpviz is slower where the certified interval
  needs a fine grid: small q at 10⁵–10⁶ steps (the single step's tail spans 10⁴–10⁵ cells, and the
  lower grid's symbol scan is a Python loop over them), and tiny ε, where dp-accounting's coarse grid
  answers in 0.01–0.02 s with a value up to twice dpviz's upper end.
"""


def render(results: list[dict]) -> str:
    """The Markdown report of ``results`` (also used to re-render from the JSON: ``--render``)."""
    rows = [_row(r) for r in results]
    n = len(rows)
    counts = {k: sum(ok[k] for _, ok in rows) for k in ("contains", "width", "time", "memory")}
    # width over its target (1e-3 relative, 1e-4 absolute below ε = 0.1): ≤ 1 meets it
    widths = [(r["upper"] - r["lower"]) / (1e-3 * max(r["upper"], 0.1)) for r in results
              if r["upper"] is not None and r["lower"] is not None]
    ratios = [r["dpviz_s"] / r["ref_s"] for r in results if r["ref_s"]]
    refs = [(r["lower"], r["upper"], r["ref"]) for r in results
            if r["ref"] is not None and r["lower"] is not None and r["upper"] is not None]
    inside = sum(lo <= ref * (1 + 1e-9) and ref <= up * (1 + 1e-9) for lo, up, ref in refs)
    above = sum(ref > up * (1 + 1e-9) for _, up, ref in refs)
    md = ["# PLD engine vs dp-accounting 0.6.0 (connect-the-dots, h = 1e-4)", "",
          "Generated by `python benchmarks/bench_pld_grid.py` (each library in a fresh subprocess per "
          "setting, timed after a small warm-up call; peak memory: the dpviz subprocess's peak RSS, "
          "imports included). ε at δ; dpviz at its default accuracy (relative width 1e-3, absolute 1e-4 "
          "below ε = 0.1). 2-core machine shared with other jobs: times are noisy (±50 %).", "",
          f"Settings: {n}. dp-accounting's value not below dpviz's certified lower end: "
          f"{counts['contains']}/{n} (inside the interval {inside}, above its upper end {above}: "
          "dp-accounting's value is itself an upper bound, looser there); width target: "
          f"{counts['width']}/{n}; no slower than dp-accounting: {counts['time']}/{n}; memory < 1 GiB: "
          f"{counts['memory']}/{n}. Worst width over its target {max(widths, default=math.nan):.2f} "
          "(≤ 1 meets it); worst time "
          f"ratio {max(ratios, default=math.nan):.2f}.", "",
          "| setting | dpviz [lower, upper] | dp-accounting | rel. width | dpviz s | dp-acc s | ratio "
          "| peak MiB | misses | grid |", "|---|---|---|---|---|---|---|---|---|---|"]
    md += [line for line, _ in rows]
    return "\n".join(md) + "\n" + NOTES


def main() -> None:
    if len(sys.argv) > 3 and sys.argv[1] == "--one":
        print(json.dumps(one(sys.argv[2], json.loads(sys.argv[3]))))
        return
    if "--render" in sys.argv:
        (OUT / "pld_grid.md").write_text(render(json.loads((OUT / "pld_grid.json").read_text())))
        return
    settings = [("gaussian", *g) for g in GAUSS] + list(OTHER)
    if "--quick" in sys.argv:
        settings = settings[20:24] + settings[24:26]
    results = []
    only = [a for a in sys.argv[1:] if a.isdigit()]
    if only:
        settings = [settings[int(i)] for i in only]
    for s in settings:
        mine, ref = _run("dpviz", s), _run("ref", s)
        if mine is None or ref is None:
            continue
        results.append({**mine, **ref})
        print(_row(results[-1])[0], flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    # a partial run (--quick, indices) never overwrites the full benchmark's results
    name = "pld_grid_partial" if "--quick" in sys.argv or only else "pld_grid"
    (OUT / f"{name}.md").write_text(render(results))
    (OUT / f"{name}.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
