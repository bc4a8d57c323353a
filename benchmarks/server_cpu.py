"""Server CPU per interaction, as a lecture hall costs it (issue 20, "cost per interaction").

    python benchmarks/server_cpu.py                    # writes benchmarks/results/server_cpu.md
    python benchmarks/server_cpu.py --pages regions --changes 10 --opens 2
    python benchmarks/server_cpu.py --serve            # behind nginx, as scripts/serve.sh serves a class

Starts ``streamlit run app.py`` on a free 127.0.0.1 port (with ``--serve``: ``scripts/serve.sh
--replicas 1``, nginx in front, whose CPU is charged too) and drives it with Playwright and Debian's
chromium (no browser download). For each page:

- **first open**: a fresh browser opens the page (its numbers may not be cached yet);
- **cached open**: ``--opens`` more fresh browsers open the same link (every number is cached), and
  each opens it once more in a new tab (Streamlit's scripts and styles then come from its cache);
- **change**: a random walk of ``--changes`` widget changes in one session: a text input set to a
  nearby value (``page_latency.nearby``: numbers scaled by 0.5–2) or back to its default, a radio
  option, a slider step or a toggle. Cache misses are included, as a person meets them.

Each action's cost is the server's CPU time (user + system, every thread and every process it
started), read before the action and again after the script run it started has finished and the page
is idle. Where the benchmark can make a control group (cgroup v1 ``cpuacct`` or cgroup v2, as root on
most Linux machines), the server is started inside one and the kernel's count for the group is read,
in nanoseconds; elsewhere the processes' ``/proc/<pid>/stat`` (ticks of 10 ms, so one reading is
exact to ±10 ms). The report says which clock it used and, with a group, the run's total by both
clocks. The browser's own work is not counted. The idle server's CPU
over the same waits is measured once and reported beside the results (not subtracted). Also
reported: the bytes the server sent on the page's websocket per action.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from load.server import stop_server  # the one way the benchmarks stop a server
from page_latency import nearby  # the same "nearby value" as the in-process latency script
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "server_cpu.md"
CHROMIUM = os.environ.get("DPVIZ_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"
SETTLE_MS = 180_000
AFTER_IDLE_MS = 250
"""After the script is idle: the last messages leave the server and the browser's replies arrive."""
TICK = 1 / os.sysconf("SC_CLK_TCK")
PAGES = {"regions": "Privacy_regions", "curves": "Composition_curves", "priors": "Database_priors",
         "mechanisms": "Mechanisms", "planner": "Plan_a_budget", "attack": "Attack_lab"}
TARGETS = {"regions": 50, "curves": 50, "priors": 50, "attack": 50, "mechanisms": 200, "planner": 300}
"""Issue 20's targets for a widget change at p95, in ms of server CPU; a cached open: 100 ms."""
OPEN_TARGET = 100


def cpu_seconds(pids: tuple[int, ...]) -> float:
    """User + system CPU of the server's processes, their threads (live and ended) and their
    waited-for children, in ticks of 10 ms."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    return total * TICK


def peak_mib(pid: int) -> float:
    """A process's peak resident memory (``VmHWM``) in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


class ServerCpu:
    """The server's CPU seconds: the kernel's count for a control group that holds the server and
    every process it starts (nanoseconds), or, where no group can be made, :func:`cpu_seconds` of its
    processes (10 ms ticks)."""

    V1, V2 = Path("/sys/fs/cgroup/cpuacct"), Path("/sys/fs/cgroup")

    def __init__(self) -> None:
        self.pids: tuple[int, ...] = ()
        self.group: Path | None = None
        name = f"dpviz-server-cpu-{os.getpid()}"
        for root, ok in ((self.V1, (self.V1 / "cpuacct.usage").exists()),
                         (self.V2, (self.V2 / "cgroup.controllers").exists())):
            if ok:
                try:
                    (root / name).mkdir()
                except OSError:
                    continue
                self.group = root / name
                break

    @property
    def clock(self) -> str:
        if self.group is None:
            return "read from /proc in 10 ms ticks"
        kind = "v1 cpuacct" if self.group.parent == self.V1 else "v2"
        return f"the kernel's nanosecond count for a control group (cgroup {kind}) holding the server"

    def enter(self) -> None:
        """In the server's process before it starts (``preexec_fn``): join the group."""
        if self.group is not None:
            (self.group / "cgroup.procs").write_text(str(os.getpid()))

    def read(self) -> float:
        if self.group is None:
            return cpu_seconds(self.pids)
        if self.group.parent == self.V1:
            return int((self.group / "cpuacct.usage").read_text()) * 1e-9
        stat = dict(line.split() for line in (self.group / "cpu.stat").read_text().splitlines())
        return int(stat["usage_usec"]) * 1e-6

    def close(self) -> None:
        if self.group is not None:
            for _ in range(50):  # the server's processes leave the group as they exit
                try:
                    self.group.rmdir()
                    return
                except OSError:
                    time.sleep(0.1)


@dataclass
class PageResult:
    first_open: float = 0.0
    opens: list[float] = field(default_factory=list)
    reopens: list[float] = field(default_factory=list)
    changes: list[tuple[float, str]] = field(default_factory=list)
    bytes_open: list[int] = field(default_factory=list)
    bytes_change: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class Wire:
    """Bytes the server sends on the page's websocket."""

    def __init__(self, page: Page) -> None:
        self.received = 0
        page.on("websocket", lambda ws: ws.on("framereceived", self._count))

    def _count(self, payload: str | bytes) -> None:
        self.received += len(payload)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def settle(page: Page) -> None:
    page.wait_for_timeout(150)
    page.wait_for_selector(IDLE, timeout=SETTLE_MS)
    page.wait_for_timeout(AFTER_IDLE_MS)


def open_cost(browser: Browser, url: str, cpu: ServerCpu, result: PageResult,
              context: BrowserContext | None = None) -> tuple[float, Page]:
    """Server CPU of opening ``url`` in a fresh browser context (a new visitor), or in a new tab of
    ``context``."""
    context = context or browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    wire = Wire(page)
    before = cpu.read()
    page.goto(url, timeout=SETTLE_MS)
    page.wait_for_selector("h1", timeout=SETTLE_MS)
    settle(page)
    cost = cpu.read() - before
    result.bytes_open.append(wire.received)
    page.wire = wire  # type: ignore[attr-defined]
    if page.locator("[data-testid=stException]").count():
        result.errors.append(f"open {url}: exception box")
    return cost, page


def widgets(page: Page) -> list[tuple[str, int]]:
    """(kind, index) of every input a person can change on the page (data editors left out)."""
    page.wait_for_selector("[data-testid=stTextInput] input", timeout=SETTLE_MS)  # drawn lazily
    found = []
    for kind, selector in (("text", "[data-testid=stTextInput] input"), ("radio", "[data-testid=stRadio]"),
                           ("slider", "[role=slider]"),
                           ("toggle", "[data-testid=stCheckbox] label")):
        found += [(kind, i) for i in range(page.locator(selector).count())]
    return found


def change(page: Page, rng: random.Random, defaults: dict[str, str]) -> str:
    """Change one input as a person would; returns what was changed."""
    kind, i = rng.choice(widgets(page))
    if kind == "text":
        box = page.locator("[data-testid=stTextInput] input").nth(i)
        label = box.get_attribute("aria-label") or f"text {i}"
        now = box.input_value()
        default = defaults.get(label, now)
        value = default if now != default and rng.random() < 0.3 else nearby(now, rng)
        if value == now:
            value = nearby(now, rng)
        box.fill(value)
        box.press("Enter")
        return f"{label} = {value}"
    if kind == "radio":
        group = page.locator("[data-testid=stRadio]").nth(i)
        options = group.locator("label")
        n = options.count()
        radios = group.get_by_role("radio")
        checked = [j for j in range(min(n, radios.count())) if radios.nth(j).is_checked(timeout=5000)]
        choices = [j for j in range(n) if j not in checked] or list(range(n))
        j = rng.choice(choices)
        text = options.nth(j).inner_text()
        options.nth(j).click()
        return f"radio → {text}"
    if kind == "slider":
        thumb = page.locator("[role=slider]").nth(i)
        key = rng.choice(("ArrowRight", "ArrowLeft"))
        thumb.focus()
        thumb.press(key)
        return f"slider {key}"
    toggle = page.locator("[data-testid=stCheckbox] label").nth(i)
    toggle.click()
    return f"toggle {toggle.inner_text()}"


def text_defaults(page: Page) -> dict[str, str]:
    boxes = page.locator("[data-testid=stTextInput] input")
    return {(boxes.nth(i).get_attribute("aria-label") or f"text {i}"): boxes.nth(i).input_value()
            for i in range(boxes.count())}


def idle_rate(cpu: ServerCpu, seconds: float = 3.0) -> float:
    """The idle server's CPU per second (event loop, config file polling, websocket pings)."""
    before = cpu.read()
    time.sleep(seconds)
    return (cpu.read() - before) / seconds


def start_server(args: argparse.Namespace, port: int, run_dir: Path, log: TextIO,
                 cpu: ServerCpu) -> subprocess.Popen[bytes]:
    """``streamlit run app.py``, or with ``--serve`` ``scripts/serve.sh --replicas 1`` (nginx in front,
    Streamlit's scripts and styles served by nginx)."""
    if args.serve:
        cmd = ["bash", "scripts/serve.sh", "--replicas", "1", "--port", str(port), "--run-dir", str(run_dir)]
    else:
        cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.headless", "true",
               "--browser.gatherUsageStats", "false"]
    return subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, preexec_fn=cpu.enter)


def server_pids(args: argparse.Namespace, server: subprocess.Popen[bytes], run_dir: Path) -> tuple[int, ...]:
    """The processes charged: the Streamlit server; with ``--serve`` its replica, nginx's master
    and nginx's workers (alive all along, so not in the master's waited-for children)."""
    if not args.serve:
        return (server.pid,)
    master = int((run_dir / "nginx.pid").read_text())
    workers = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    replicas = (run_dir / "replicas.pid").read_text().split()
    return tuple(int(p) for p in (*replicas, master, *workers))


def measure(args: argparse.Namespace, cpu: ServerCpu) -> tuple[dict[str, PageResult], float, str]:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    (ROOT / "test-artifacts").mkdir(exist_ok=True)
    results: dict[str, PageResult] = {}
    run_dir = Path(tempfile.mkdtemp(prefix="dpviz-server-cpu-"))
    with open(ROOT / "test-artifacts" / "server-cpu-streamlit.log", "w") as log:
        server = start_server(args, port, run_dir, log, cpu)
        try:
            for _ in range(400):
                try:
                    with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                        if r.read().strip() == b"ok":
                            break
                except OSError:
                    time.sleep(0.3)
            cpu.pids = server_pids(args, server, run_dir)
            start = (cpu.read(), cpu_seconds(cpu.pids))
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
                # warm-up: the server's first script run imports the app (not a visitor's cost). The
                # home page stays open (the teacher's tab): with no session left, Streamlit drops
                # its compiled scripts, which no lecture hall sees
                _, teacher = open_cost(browser, base, cpu, PageResult())
                idle = idle_rate(cpu)
                for name in args.pages:
                    results[name] = run_page(browser, f"{base}/{PAGES[name]}", cpu, args,
                                             random.Random(f"{args.seed}-{name}"))
                    print(name, summary_line(name, results[name]), flush=True)
                    if args.each:  # every change of the walk, in order: which one cost what
                        for cost, what in results[name].changes:
                            print(f"  {cost * 1000:4.0f} ms  {what}", flush=True)
                teacher.context.close()
                browser.close()
            ticks = cpu_seconds(cpu.pids) - start[1]
            peak = max(peak_mib(pid) for pid in cpu.pids)  # the Streamlit replica's, nginx's far less
            totals = (f"The run's total: {cpu.read() - start[0]:.2f} s by the group's clock, {ticks:.2f} s "
                      "by /proc." if cpu.group else f"The run's total: {ticks:.2f} s.")
            totals += f" The server's peak memory (VmHWM): {peak:.0f} MiB."
        finally:
            stop_server(server)  # SIGTERM: serve.sh stops its replica and nginx
            shutil.rmtree(run_dir, ignore_errors=True)
    return results, idle, totals


def run_page(browser: Browser, url: str, cpu: ServerCpu, args: argparse.Namespace,
             rng: random.Random) -> PageResult:
    result = PageResult()
    result.first_open, page = open_cost(browser, url, cpu, result)
    page.context.close()
    for _ in range(args.opens):
        cost, page = open_cost(browser, url, cpu, result)
        result.opens.append(cost)
        # the same browser opens the link again in a new tab: a new session, the app's scripts and
        # styles already in the browser's cache (a student who has opened the app before)
        again, _ = open_cost(browser, url, cpu, PageResult(), context=page.context)
        result.reopens.append(again)
        page.context.close()
    _, page = open_cost(browser, url, cpu, PageResult())  # the session that walks
    defaults = text_defaults(page)
    wire = page.wire  # type: ignore[attr-defined]
    for _ in range(args.changes):
        sent, before = wire.received, cpu.read()
        try:
            what = change(page, rng, defaults)
            settle(page)
        except Exception as exc:  # a timeout is a finding, not a crash of the script
            result.errors.append(f"{url}: {type(exc).__name__}: {str(exc)[:120]}")
            break
        result.changes.append((cpu.read() - before, what))
        result.bytes_change.append(wire.received - sent)
        if page.locator("[data-testid=stException]").count():
            result.errors.append(f"{url} after {what}: exception box")
    page.context.close()
    return result


def quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def summary_line(name: str, r: PageResult) -> str:
    ms = [c * 1000 for c, _ in r.changes]
    opens = [c * 1000 for c in r.opens]
    return (f"first open {r.first_open * 1000:.0f} ms; cached open p50 {statistics.median(opens):.0f}"
            f" max {max(opens):.0f}; change p50 {statistics.median(ms):.0f} p95 {quantile(ms, 0.95):.0f}"
            f" (n={len(ms)}, target {TARGETS[name]})") if ms and opens else "no samples"


SERVED = {False: "One `streamlit run app.py`",
          True: "`scripts/serve.sh --replicas 1` (nginx, serving Streamlit's scripts and styles itself, in "
                "front of one `streamlit run app.py`; the CPU of both is charged)"}


def report(results: dict[str, PageResult], idle: float, args: argparse.Namespace, clock: str,
           totals: str) -> str:
    lines = [
        "# Server CPU per interaction (`python benchmarks/server_cpu.py`)",
        "",
        f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}, load average "
        f"{os.getloadavg()[0]:.1f} at the end. {SERVED[args.serve]}, one headless chromium, on "
        f"127.0.0.1. Server CPU (user + system, all threads and processes) per action in ms, {clock}; "
        f"{args.opens} cached opens and a random walk of {args.changes} widget changes per page "
        f"(seed {args.seed}). The idle server spends {idle * 1000:.0f} ms of CPU per second (not "
        f"subtracted; each action's window is about 0.4 s longer than its run). {totals}",
        "",
        "| page | first open | cached open p50 | cached open max | same browser, new tab p50 | change p50 | "
        "change p95 | change max | target p95 | KB per open | KB per change p50 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        ms = [c * 1000 for c, _ in r.changes] or [float("nan")]
        opens = [c * 1000 for c in r.opens] or [float("nan")]
        kb = statistics.median(r.bytes_change) / 1024 if r.bytes_change else float("nan")
        kb_open = statistics.median(r.bytes_open) / 1024 if r.bytes_open else float("nan")
        reopens = [c * 1000 for c in r.reopens] or [float("nan")]
        lines.append(f"| {name} | {r.first_open * 1000:.0f} | {statistics.median(opens):.0f} | "
                     f"{max(opens):.0f} | {statistics.median(reopens):.0f} | "
                     f"{statistics.median(ms):.0f} | {quantile(ms, 0.95):.0f} | "
                     f"{max(ms):.0f} | {TARGETS[name]} | {kb_open:.0f} | {kb:.0f} |")
    lines += ["", f"Target for a cached open: ≤ {OPEN_TARGET} ms. A *cached open* is a fresh browser: it "
              "also fetches Streamlit's scripts and styles (about 30 files) from the server; *same browser, "
              "new tab* is a student who has opened the app before (those files come from the browser's "
              "cache, immutable for a year), which leaves the session and its script run.",
              "", "Slowest changes:", ""]
    for name, r in results.items():
        worst = sorted(r.changes, reverse=True)[:3]
        lines.append(f"- {name}: " + "; ".join(f"{c * 1000:.0f} ms ({what})" for c, what in worst))
    errors = [e for r in results.values() for e in r.errors]
    if errors:
        lines += ["", "Errors:", *(f"- {e}" for e in errors[:30])]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", nargs="+", choices=list(PAGES), default=list(PAGES))
    parser.add_argument("--opens", type=int, default=3)
    parser.add_argument("--changes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--each", action="store_true", help="also print every change of the walk and its CPU")
    parser.add_argument("--serve", action="store_true",
                        help="through scripts/serve.sh --replicas 1 (nginx serves Streamlit's scripts and "
                             "styles); the replica's and nginx's CPU are charged")
    args = parser.parse_args()
    cpu = ServerCpu()
    try:
        results, idle, totals = measure(args, cpu)
    finally:
        cpu.close()
    text = report(results, idle, args, cpu.clock, totals)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
