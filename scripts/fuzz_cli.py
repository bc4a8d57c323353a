#!/usr/bin/env python3
"""Long fuzz run of the CLI (issue 14): many generated argument sets per subcommand, in-process.

    python3 scripts/fuzz_cli.py --cases 10000 --seed 1 --jobs 2

Targets: ``compose``, ``gce`` and ``mechanism``, whose ``--cases`` are shared equally by its four
kinds (gaussian, laplace, geometric, randomized-response). Cases come from the same Hypothesis
strategies as ``tests/fuzz/test_cli_fuzz.py``, with the wide ranges (k up to 10^7) switched on.
Each case runs ``dpviz.cli.main`` with warnings as errors and a time guard, and is judged by
``tests/fuzz/harness.check``. Prints and writes (``--out``, Markdown) the counts of tracebacks,
invalid JSON, consistency failures and timeouts, the failing cases and the slowest ones.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import platform
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KINDS = ("gaussian", "laplace", "geometric", "randomized-response")
TARGETS = ("compose", "gce", "mix", *KINDS)
CHUNK = 250


def _strategy(target: str, wide: bool):
    from tests.fuzz import space

    if target == "compose":
        return space.compose(wide=wide)
    if target == "gce":
        return space.gce(wide=wide)
    if target == "mix":
        return space.mix(wide=wide)
    return space.mechanism(target, wide=wide)


def run_chunk(task: tuple[str, int, int, bool, float]) -> dict:
    """Generate and check ``n`` cases of one target with one seed (runs in a worker process)."""
    target, seed, n, wide, timeout = task
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    from tests.fuzz.harness import check

    records: list[tuple[str, float, list[str], list[str]]] = []

    @hseed(seed)
    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(argv=_strategy(target, wide))
    def _one(argv: list[str]) -> None:
        o = check(argv, timeout=timeout)
        records.append((o.category, o.seconds, o.argv, o.problems))

    _one()
    return {"target": target, "records": records}


def summarise(results: list[dict], *, args: argparse.Namespace, seconds: float) -> str:
    by_target: dict[str, Counter] = {t: Counter() for t in args.targets}
    exits: dict[str, Counter] = {t: Counter() for t in args.targets}
    failures: list[tuple[str, list[str], list[str]]] = []
    slow: list[tuple[float, str, list[str]]] = []
    for res in results:
        t = res["target"]
        for category, secs, argv, problems in res["records"]:
            by_target[t][category] += 1
            exits[t]["cases"] += 1
            if category != "ok":
                failures.append((category, argv, problems))
            slow.append((secs, t, argv))
    slow.sort(reverse=True)
    cats = ("traceback", "invalid-json", "inconsistent", "bad-stderr", "bad-exit", "timeout")
    lines = [
        "# CLI fuzz run (issue 14)",
        "",
        f"`python3 scripts/fuzz_cli.py --cases {args.cases} --seed {args.seed} --jobs {args.jobs} "
        f"--timeout {args.timeout:g}{'' if args.wide else ' --narrow'}` at commit {args.commit}, "
        f"{time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, "
        f"{seconds / 60:.1f} min wall time on {args.jobs} process(es).",
        "",
        "Each case runs `dpviz.cli.main(argv)` in-process with warnings as errors and a time guard; "
        "a success must be strict JSON (no NaN/Infinity), nothing on stderr, and consistent "
        "(optimal ≤ every bound; exact ≤ every two-sided bound; lower ≤ upper); an exit 2 must be "
        "one stderr line naming a field.",
        "",
        "| target | cases | ok | " + " | ".join(cats) + " |",
        "|---|---:|---:|" + "---:|" * len(cats),
    ]
    total = Counter()
    for t in args.targets:
        c = by_target[t]
        n = exits[t]["cases"]
        total.update(c)
        total["cases"] += n
        lines.append(f"| {t} | {n:,} | {c['ok']:,} | " + " | ".join(f"{c[x]:,}" for x in cats) + " |")
    kinds = [t for t in args.targets if t in KINDS]
    if kinds:
        mech = Counter()
        for t in kinds:
            mech.update(by_target[t])
            mech["cases"] += exits[t]["cases"]
        lines.append(f"| mechanism (all kinds) | {mech['cases']:,} | {mech['ok']:,} | "
                     + " | ".join(f"{mech[x]:,}" for x in cats) + " |")
    lines.append(f"| **all** | {total['cases']:,} | {total['ok']:,} | "
                 + " | ".join(f"{total[x]:,}" for x in cats) + " |")
    lines += ["", f"## Failures ({len(failures)})", ""]
    if not failures:
        lines.append("None.")
    for category, argv, problems in failures[:60]:
        lines.append(f"- **{category}** `{' '.join(_quote(a) for a in argv)}`: {'; '.join(problems)[:400]}")
    lines += ["", "## Slowest cases", "", "| seconds | target | argv |", "|---:|---|---|"]
    for secs, t, argv in slow[:15]:
        lines.append(f"| {secs:.2f} | {t} | `{' '.join(_quote(a) for a in argv)}` |")
    return "\n".join(lines) + "\n"


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, timeout=10)
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


def _quote(a: str) -> str:
    return a if a and all(c.isalnum() or c in "-.:,_+" for c in a) else repr(a)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", type=int, default=10_000,
                   help="cases per subcommand (default 10000; mechanism: a quarter per kind)")
    p.add_argument("--seed", type=int, default=1, help="base seed (default 1)")
    p.add_argument("--jobs", type=int, default=2, choices=(1, 2), help="worker processes (at most 2)")
    p.add_argument("--timeout", type=float, default=150.0,
                   help="per-call time guard in seconds (default 150: above the CLI's 60 s cost budget, "
                        "which its estimates keep to within a factor of about 2)")
    p.add_argument("--targets", default=",".join(TARGETS),
                   help="comma-separated subset of " + ", ".join(TARGETS))
    p.add_argument("--narrow", dest="wide", action="store_false",
                   help="the default test's ranges (no k up to 10^7)")
    p.add_argument("--out", default=str(ROOT / "benchmarks/results/fuzz_cli.md"), help="Markdown summary")
    p.add_argument("--commit", default=_commit(), help="commit named in the summary (default: git HEAD)")
    args = p.parse_args()
    args.targets = [t for t in args.targets.split(",") if t]
    unknown = set(args.targets) - set(TARGETS)
    if unknown:
        p.error(f"unknown targets {sorted(unknown)}")
    tasks = []
    for ti, t in enumerate(args.targets):
        done = 0
        ci = 0
        want = -(-args.cases // len(KINDS)) if t in KINDS else args.cases
        while done < want:
            n = min(CHUNK, want - done)
            tasks.append((t, args.seed * 1_000_003 + ti * 10_007 + ci, n, args.wide, args.timeout))
            done += n
            ci += 1
    t0 = time.perf_counter()
    results = []
    ctx = mp.get_context("fork")
    with ctx.Pool(args.jobs, maxtasksperchild=4) as pool:
        for i, res in enumerate(pool.imap_unordered(run_chunk, tasks), 1):
            results.append(res)
            bad = Counter(r[0] for r in res["records"] if r[0] != "ok")
            print(f"[{time.perf_counter() - t0:7.0f}s] chunk {i}/{len(tasks)} {res['target']}: "
                  f"{len(res['records'])} cases, {dict(bad) or 'all ok'}", flush=True)
    text = summarise(results, args=args, seconds=time.perf_counter() - t0)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
