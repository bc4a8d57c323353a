"""Server CPU per interaction, without a browser: one protocol client at a time.

    python benchmarks/load/cpu_per_action.py                          # every page, 20 changes each
    python benchmarks/load/cpu_per_action.py --links "Mechanisms?k=10000" --changes 40
    python benchmarks/load/cpu_per_action.py --url http://127.0.0.1:8501 --server-pid 1234

For each lesson link: its first open (cold caches), three opens in new sessions once its
numbers are cached, then ``--changes`` widget changes (the random walk of
``benchmarks/page_latency.py``: numbers scaled by 0.5–2, another option, the other toggle
state). Each action is charged the CPU time (user + system) that the server process and its
children spent between sending the action and receiving its ``script_finished``, read from the
kernel (psutil), so other jobs on the machine do not inflate it; the server must have no other
client meanwhile. Written to ``benchmarks/results/cpu_per_action.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lessons import LESSON_LINKS
from protocol import Run, ServerCPU, Session
from server import Server

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "cpu_per_action.md"


def page_costs(base: str, cpu: ServerCPU, link: str, changes: int, seed: int) -> dict[str, list[Run]]:
    """The runs of one page: cold open, cached opens, changes (each with its server CPU)."""
    rng = random.Random(seed)
    runs: dict[str, list[Run]] = {"cold": [], "cached": [], "change": []}
    session = Session(base)
    try:
        runs["cold"].append(cpu.measure(lambda: session.open(link)))
        for _ in range(3):
            runs["cached"].append(cpu.measure(lambda: session.open(link)))
        for _ in range(changes):
            runs["change"].append(cpu.measure(lambda: session.change(rng)))
    finally:
        session.close()
    return runs


def _p(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def markdown(rows: dict[str, dict[str, list[Run]]], changes: int) -> str:
    lines = [
        "# Server CPU per interaction (`python benchmarks/load/cpu_per_action.py`)",
        "",
        f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}, load average "
        f"{os.getloadavg()[0]:.1f} at the end. One browserless client at a time; CPU seconds of the "
        "streamlit server process (user + system) per action. Changes: "
        f"{changes} per page, a random walk from the page's link.",
        "",
        "| link | open, cold s | open, cached s (median of 3) | change s p50 / p95 / max "
        "| change wall s p50 | KB per change (median) | exception boxes |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for link, runs in rows.items():
        cpu = [r.server_cpu_s or 0.0 for r in runs["change"]]
        wall = [r.seconds for r in runs["change"]]
        kb = [r.bytes / 1024 for r in runs["change"]]
        boxes = sum(len(r.exceptions) for rs in runs.values() for r in rs)
        cached = statistics.median(r.server_cpu_s or 0.0 for r in runs["cached"])
        change = f"{_p(cpu, 0.5):.2f} / {_p(cpu, 0.95):.2f} / {max(cpu):.2f}" if cpu else "—"
        lines.append(
            f"| `{link}` | {runs['cold'][0].server_cpu_s:.2f} | {cached:.2f} | {change} "
            f"| {statistics.median(wall) if wall else 0:.2f} | {statistics.median(kb) if kb else 0:.0f} "
            f"| {boxes} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running server with no other client (default: start one)")
    parser.add_argument("--server-pid", type=int, action="append", default=[])
    parser.add_argument("--links", nargs="+", default=list(LESSON_LINKS))
    parser.add_argument("--changes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=str(OUT), help="Markdown results ('-': none)")
    args = parser.parse_args()
    server = None if args.url else Server(0)
    try:
        base = args.url or server.base  # type: ignore[union-attr]
        cpu = ServerCPU(args.server_pid or (server.pids if server else []))
        rows = {link: page_costs(base, cpu, link, args.changes, args.seed) for link in args.links}
    finally:
        if server:
            server.stop()
    text = markdown(rows, args.changes)
    if args.out != "-":
        Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
