"""A lecture hall without browsers: Locust users speaking Streamlit's protocol against a server.

    python benchmarks/load/run.py                                   # the measurement of load.md
    python benchmarks/load/run.py --class-size 60 --ramp 10,30,60 --seconds 60
    python benchmarks/load/run.py --url http://127.0.0.1:8080 --server-pid 123 --server-pid 124 \\
        --class-size 6 --ramp 6 --seconds 20 --json result.json --out -

Without ``--url`` it starts ``streamlit run app.py`` on a free 127.0.0.1 port (``--replicas N``:
``scripts/serve.sh`` with N servers behind nginx), a new one for the class and for each lesson,
and stops it after. Two scenarios, each bounded in time, on loopback only
(``benchmarks/load/locustfile.py`` has the users):

- **a class opens one link**: ``--class-size`` sessions open ``--link`` within the same second
  (after the teacher opened it once). Reported: when the last student had the whole page
  (``script_finished``) and the first figure, counted from the moment the class clicked.
- **a lesson**: for each N of ``--ramp``, N sessions open one of the lesson links (spread over
  one change interval) and each changes an input every ``--change-every`` seconds for
  ``--seconds``; reported: the rerun time of the changes (p50 / p95 / max), errors, and how
  many of the server's cores were busy. The largest N whose p95 stays under 1 s is the number
  of sessions the server sustains; divided by the cores the server can use, per core.

The server's CPU (the given or started processes and their children; nginx's too when this
script starts it) and the load generator's own CPU are read before and after each scenario; the
machine's load average is quoted, since the generator shares the machine with the server (and,
here, with other jobs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gevent
import psutil
from locust.env import Environment

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lessons import CLASS_LINK
from locustfile import LessonUser
from protocol import ServerCPU
from server import Server

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "load.md"
TARGET_S = 1.0  # p95 rerun a session can live with


@dataclass
class Sample:
    kind: str
    user: int
    page: str
    seconds: float
    done_at: float  # seconds since the scenario started
    first_figure_s: float | None
    bytes: int
    error: str | None


@dataclass
class Scenario:
    name: str
    users: int
    wall_s: float = 0.0
    server_cpu_s: float = 0.0
    generator_cpu_s: float = 0.0
    load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    samples: list[Sample] = field(default_factory=list)

    def of(self, kind: str) -> list[Sample]:
        return [s for s in self.samples if s.kind == kind]

    def errors(self) -> list[str]:
        return [f"{s.kind} {s.page}: {s.error}" for s in self.samples if s.error]


def quantiles(xs: list[float]) -> dict[str, float]:
    if not xs:
        return {}
    s = sorted(xs)
    return {"p50": statistics.median(s), "p95": s[min(len(s) - 1, int(0.95 * len(s)))], "max": s[-1]}


def _own_cpu() -> float:
    t = psutil.Process().cpu_times()
    return t.user + t.system


def scenario(name: str, base: str, cpu: ServerCPU, *, users: int, spawn_rate: float, link: str,
             change_every: float, seconds: float, until_opened: bool, assets: bool, seed: int,
             changes: int = 0) -> Scenario:
    """Run ``users`` Locust users for ``seconds``, or until every one has opened its page
    (``until_opened``) or made ``changes`` changes."""
    result = Scenario(name, users)
    t0 = time.monotonic()

    def on_request(name: str, response_time: float, response_length: int, exception: Any,
                   context: dict[str, Any], **_: Any) -> None:
        result.samples.append(Sample(
            context["kind"], context["user"], name.split(" ", 1)[1], response_time / 1000,
            time.monotonic() - t0, context["first_figure_s"], response_length,
            None if exception is None else str(exception)[:200]))

    LessonUser.configure(link=link, change_every=change_every, assets=assets, seed=seed)
    env = Environment(user_classes=[LessonUser], host=base, stop_timeout=60)
    env.events.request.add_listener(on_request)
    runner = env.create_local_runner()
    result.load_before = os.getloadavg()
    server0, own0 = cpu.seconds(), _own_cpu()
    t0 = time.monotonic()
    runner.start(users, spawn_rate=spawn_rate)

    def finished() -> bool:
        tried = {s.user for s in result.of("open")}
        if len(tried) < users:
            return False
        made = Counter(s.user for s in result.of("change") if not s.error)
        return until_opened or (changes > 0 and all(made[u] >= changes for u in tried))

    deadline = t0 + seconds
    while time.monotonic() < deadline and not finished():
        gevent.sleep(0.2)
    runner.stop()
    runner.quit()
    result.wall_s = time.monotonic() - t0
    result.server_cpu_s, result.generator_cpu_s = cpu.seconds() - server0, _own_cpu() - own0
    result.load_after = os.getloadavg()
    return result


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The class (teacher, then class) and each lesson of the ramp, each on a server of its own
    when this script starts them: the walk of inputs revisits values, so a lesson on the server of
    the one before would find its numbers cached and a larger ramp step would look cheaper."""
    steps: list[list[dict[str, Any]]] = []
    common = {"assets": args.assets, "seed": args.seed}
    if args.class_size:  # the teacher opens the link first (numbers cached), then the class at once
        steps.append([
            dict(name="teacher", users=1, spawn_rate=1, link=args.link, change_every=1e9,
                 seconds=args.timeout, until_opened=True, **common),
            dict(name="class", users=args.class_size, spawn_rate=args.class_size, link=args.link,
                 change_every=1e9, seconds=args.timeout, until_opened=True, **common)])
    for n in args.ramp:
        steps.append([dict(name="lesson", users=n, spawn_rate=max(1.0, n / args.change_every),
                           link=args.lesson_link, change_every=args.change_every,
                           seconds=args.change_every + args.seconds, until_opened=False,
                           changes=args.changes, **common)])
    out: dict[str, Any] = {"base": args.url, "server_processes": len(args.server_pid),
                           "cores": os.cpu_count(), "scenarios": []}
    for step in steps:
        server = None if args.url else Server(args.replicas)
        try:
            base = args.url or server.base  # type: ignore[union-attr]
            pids = args.server_pid or (server.pids if server else [])
            cpu = ServerCPU([*pids, *(server.nginx_pids if server else [])])
            out["base"], out["server_processes"] = base, len(pids)
            for kw in step:
                out["scenarios"].append(scenario(kw.pop("name"), base, cpu, **kw))
        finally:
            if server:
                server.stop()
    return out


def summary(out: dict[str, Any]) -> dict[str, Any]:
    """The numbers of each scenario, as JSON (the test reads this)."""
    rows = []
    for sc in out["scenarios"]:
        opens, changes = sc.of("open"), sc.of("change")
        ok_opens = [s for s in opens if not s.error]
        rows.append({
            "name": sc.name, "users": sc.users, "wall_s": round(sc.wall_s, 1),
            "opens": len(opens), "opened_ok": len({s.user for s in ok_opens}), "changes": len(changes),
            "changes_ok": sum(1 for s in changes if not s.error),
            "errors": sc.errors()[:20],
            "last_open_done_s": max((s.done_at for s in ok_opens), default=None),
            "last_first_figure_s": max((s.done_at - s.seconds + s.first_figure_s for s in ok_opens
                                        if s.first_figure_s is not None), default=None),
            "open_s": quantiles([s.seconds for s in ok_opens]),
            "change_s": quantiles([s.seconds for s in changes if not s.error]),
            "server_cores_busy": round(sc.server_cpu_s / sc.wall_s, 2) if sc.wall_s else None,
            "server_cpu_per_run_s": round(sc.server_cpu_s / len(sc.samples), 3) if sc.samples else None,
            "generator_cores_busy": round(sc.generator_cpu_s / sc.wall_s, 2) if sc.wall_s else None,
            "load_before": [round(x, 2) for x in sc.load_before],
            "load_after": [round(x, 2) for x in sc.load_after],
            "samples": [asdict(s) for s in sc.samples],
        })
    lessons = [r for r in rows if r["name"] == "lesson"]
    sustained = max((r["users"] for r in lessons if r["change_s"] and r["change_s"]["p95"] < TARGET_S
                     and not r["errors"]), default=0)
    cores = min(out["cores"] or 1, max(1, out["server_processes"]))
    return {"base": out["base"], "cores": out["cores"], "server_processes": out["server_processes"],
            "sustained_sessions": sustained, "sessions_per_core": round(sustained / cores, 1),
            "scenarios": rows}


def _q(q: dict[str, float]) -> str:
    return " / ".join(f"{q[k]:.2f}" for k in ("p50", "p95", "max")) if q else "—"


def _changes_by_page(rows: list[dict[str, Any]]) -> list[str]:
    """The lessons' change times per page (p50 / p95 / max): where the tail comes from."""
    lessons = [r for r in rows if r["name"] == "lesson"]
    pages = sorted({x["page"] for r in lessons for x in r["samples"] if x["kind"] == "change"})
    if not pages:
        return []
    lines = ["", "Change s p50 / p95 / max by page:", "",
             "| sessions | " + " | ".join(pages) + " |", "|---:|" + "---:|" * len(pages)]
    for r in lessons:
        cells = [_q(quantiles([x["seconds"] for x in r["samples"] if x["kind"] == "change"
                               and x["page"] == page and not x["error"]])) for page in pages]
        lines.append(f"| {r['users']} | " + " | ".join(cells) + " |")
    return lines


def markdown(s: dict[str, Any], args: argparse.Namespace) -> str:
    lessons = f"`{args.lesson_link}`" if args.lesson_link else "one of `locustfile.py`'s LESSON_LINKS"
    lines = [
        "# Load test without browsers (`python benchmarks/load/run.py`)",
        "",
        f"{platform.node()}: {s['cores']} cores, Python {platform.python_version()}; "
        f"{s['server_processes']} streamlit server process(es)"
        f"{' behind nginx' if args.replicas else ''}; the Locust load generator on the same machine; "
        "all on 127.0.0.1. Each session speaks Streamlit's websocket protocol "
        "(`benchmarks/load/protocol.py`): it loads the page's HTML and its script and style files "
        "(as a new browser: six connections at a time, the compressed bytes), opens "
        "`/_stcore/stream`, and sends the rerun messages a browser sends. Server CPU: the "
        f"Streamlit process(es){' and nginx' if args.replicas else ''}.",
        "",
        "| scenario | sessions | pages complete | open s p50 / p95 / max | last page complete s "
        "| last first figure s | changes | change s p50 / p95 / max | errors | server CPU s per run "
        "| server cores busy | generator cores busy | load avg before → after |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in s["scenarios"]:
        last = "—" if r["last_open_done_s"] is None else f"{r['last_open_done_s']:.1f}"
        fig = "—" if r["last_first_figure_s"] is None else f"{r['last_first_figure_s']:.1f}"
        lines.append(
            f"| {r['name']} | {r['users']} | {r['opened_ok']} | {_q(r['open_s'])} | {last} "
            f"| {fig} | {r['changes']} | {_q(r['change_s'])} | {len(r['errors'])} "
            f"| {r['server_cpu_per_run_s']} | {r['server_cores_busy']} | {r['generator_cores_busy']} "
            f"| {r['load_before'][0]:.1f} → {r['load_after'][0]:.1f} |")
    lines += [
        "",
        f"Sustained with p95 rerun < {TARGET_S:g} s: **{s['sustained_sessions']} sessions** "
        f"(of the ramp {', '.join(map(str, args.ramp))}), {s['sessions_per_core']} per server core. "
        f"Class link: `{args.link}`; lesson links: {lessons} per session, "
        f"a change every {args.change_every:g} s for {args.seconds:g} s "
        "after the sessions have opened.",
    ]
    lines += _changes_by_page(s["scenarios"])
    errors = [e for r in s["scenarios"] for e in r["errors"]]
    if errors:
        lines += ["", "Errors (first 20):", *(f"- {e}" for e in errors[:20])]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running server (default: start one)")
    parser.add_argument("--server-pid", type=int, action="append", default=[],
                        help="a server process whose CPU to read (repeat for replicas)")
    parser.add_argument("--replicas", type=int, default=0,
                        help="start scripts/serve.sh with this many replicas instead of one server")
    parser.add_argument("--class-size", type=int, default=60)
    parser.add_argument("--link", default=CLASS_LINK)
    parser.add_argument("--lesson-link", default="", help="every lesson session opens this link "
                        "(default: the lesson links of locustfile.py, one per session in turn)")
    parser.add_argument("--ramp", type=lambda t: [int(x) for x in t.split(",") if x], default=[10, 30, 60])
    parser.add_argument("--seconds", type=float, default=60.0, help="lesson time after the spawn")
    parser.add_argument("--change-every", type=float, default=10.0)
    parser.add_argument("--changes", type=int, default=0,
                        help="end a lesson early once every session has made this many changes")
    parser.add_argument("--timeout", type=float, default=180.0, help="longest wait for a class to open")
    parser.add_argument("--no-assets", dest="assets", action="store_false")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=str(OUT), help="Markdown results ('-': none)")
    parser.add_argument("--json", help="write the JSON summary (with every sample) here")
    args = parser.parse_args()
    s = summary(run(args))
    if args.out != "-":
        Path(args.out).write_text(markdown(s, args))
    if args.json:
        Path(args.json).write_text(json.dumps(s, indent=1))
    print(markdown(s, args))


if __name__ == "__main__":
    main()
