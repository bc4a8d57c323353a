"""Load test: many people using the app at once on this machine (issue 14, "bounded cost").

    python benchmarks/load_app.py                      # 20 + 5 sessions for 60 s
    python benchmarks/load_app.py --users 4 --heavy 1 --seconds 20

Starts ``streamlit run app.py`` on a free 127.0.0.1 port and one headless Debian chromium
(Playwright, no browser download), then runs, concurrently,
- ``--users`` sessions that each open a random page and change a random input (a text
  field scaled by a random factor, or a radio option) until ``--seconds`` have passed;
- ``--heavy`` sessions that open, one after another, the most expensive URLs we know of.

Every request stays on 127.0.0.1. Reported: interactions, errors (an exception box on the
page, or a page that did not settle within the timeout), the rerun time seen by the browser
(change → script idle again) as p50/p95/max, and the server's resident memory (the streamlit
process and its children) at start, peak and end. Written to ``benchmarks/results/load.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from page_latency import nearby  # the same nearby value as the server-side latency script
from playwright.async_api import Browser, Page, async_playwright

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "load.md"
CHROMIUM = os.environ.get("DPVIZ_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"
SETTLE_MS = 120_000
PAGES = ("Privacy_regions", "Composition_curves", "Database_priors", "Mechanisms")  # pages with inputs

HEAVY_URLS = (
    # the fuzz run's slowest shared links (issue 14 item 3) and the largest sizes each page takes
    "Database_priors?preset=In+at+least+k%27+databases&k=100000",
    "Database_priors?delta0=0.01&k=100000&cap=100000",
    "Database_priors?preset=In+at+least+one+database&k=100000&delta0=1e-9",
    "Mechanisms?k=100000&sigma=0.05&sampling_rate=0.5",
    "Mechanisms?k=10000&sigma=0.9&sampling_rate=0.01",
    "Mechanisms?k=100000&sigma=0.6&sampling_rate=0.001&delta=1e-10",
    "Composition_curves?delta0=0.001&k_max=1000000",
    "Composition_curves?eps0=1e-8&k_max=1000000&delta=1e-100",
    "Privacy_regions?k=10000&eps0=0.01&delta0=1e-9",
)


@dataclass
class Tally:
    rerun_s: list[float] = field(default_factory=list)
    load_s: list[float] = field(default_factory=list)
    interactions: int = 0
    errors: list[str] = field(default_factory=list)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


async def _settle(page: Page) -> None:
    await page.wait_for_timeout(150)
    await page.wait_for_selector(IDLE, timeout=SETTLE_MS)


async def _check(page: Page, tally: Tally, where: str) -> None:
    boxes = await page.locator("[data-testid=stException]").count()
    if boxes:
        text = (await page.locator("[data-testid=stException]").first.inner_text())[:200]
        tally.errors.append(f"{where}: exception box: {text}")


async def _open(page: Page, url: str, tally: Tally) -> bool:
    t0 = time.perf_counter()
    try:
        await page.goto(url, timeout=SETTLE_MS)
        await page.wait_for_selector("h1", timeout=SETTLE_MS)
        await _settle(page)
    except Exception as exc:  # a timeout is a finding, not a crash of the script
        tally.errors.append(f"open {url}: {type(exc).__name__}")
        return False
    tally.load_s.append(time.perf_counter() - t0)
    await _check(page, tally, url)
    return True


async def _change_something(page: Page, rng: random.Random) -> str:
    """Change one input as a person would; returns what was changed."""
    await page.wait_for_selector("[data-testid=stTextInput] input", timeout=SETTLE_MS)  # drawn lazily
    boxes = page.locator("[data-testid=stTextInput] input")
    radios = page.locator("[data-testid=stRadio] label")
    n_boxes, n_radios = await boxes.count(), await radios.count()
    if n_radios and (not n_boxes or rng.random() < 0.2):
        choice = radios.nth(rng.randrange(n_radios))
        await choice.click()
        return "radio"
    box = boxes.nth(rng.randrange(n_boxes))
    value = nearby(await box.input_value(), rng)
    await box.fill(value)
    await box.press("Enter")
    return f"text={value}"


async def user(browser: Browser, base: str, seed: int, until: float, tally: Tally) -> None:
    rng = random.Random(seed)
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    page = await context.new_page()
    try:
        while time.monotonic() < until:
            path = rng.choice(PAGES)
            if not await _open(page, f"{base}/{path}", tally):
                continue
            for _ in range(rng.randint(2, 5)):
                if time.monotonic() >= until:
                    break
                t0 = time.perf_counter()
                try:
                    what = await _change_something(page, rng)
                    await _settle(page)
                except Exception as exc:
                    tally.errors.append(f"/{path}: change did not settle: {type(exc).__name__}: "
                                        f"{str(exc)[:120]}")
                    break
                tally.rerun_s.append(time.perf_counter() - t0)
                tally.interactions += 1
                await _check(page, tally, f"/{path} after {what}")
    finally:
        await context.close()


async def heavy(browser: Browser, base: str, seed: int, until: float, tally: Tally) -> None:
    rng = random.Random(seed)
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    page = await context.new_page()
    urls = list(HEAVY_URLS)
    rng.shuffle(urls)
    try:
        i = 0
        while time.monotonic() < until:
            if await _open(page, f"{base}/{urls[i % len(urls)]}", tally):
                tally.interactions += 1
            i += 1
    finally:
        await context.close()


async def run(args: argparse.Namespace) -> dict:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    (ROOT / "test-artifacts").mkdir(exist_ok=True)
    log = open(ROOT / "test-artifacts" / "load-streamlit.log", "w")  # noqa: SIM115
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(200):
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        break
            except OSError:
                await asyncio.sleep(0.3)
        rss = [_tree_rss(server.pid)]
        stop = asyncio.Event()

        async def sample() -> None:
            while not stop.is_set():
                rss.append(_tree_rss(server.pid))
                await asyncio.sleep(0.5)

        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            users, heavies = Tally(), Tally()
            sampler = asyncio.create_task(sample())
            t0 = time.monotonic()
            until = t0 + args.seconds
            await asyncio.gather(
                *(user(browser, base, args.seed + i, until, users) for i in range(args.users)),
                *(heavy(browser, base, args.seed + 1000 + i, until, heavies) for i in range(args.heavy)))
            elapsed = time.monotonic() - t0
            await browser.close()
        await asyncio.sleep(5)  # let the server finish what the browsers left behind
        stop.set()
        await sampler
        rss.append(_tree_rss(server.pid))
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
    return {"users": args.users, "heavy": args.heavy, "seconds": args.seconds, "elapsed": elapsed,
            "user": users, "heavy_tally": heavies, "rss_mb": [r / 2**20 for r in rss]}


def _quantiles(xs: list[float]) -> str:
    if not xs:
        return "—"
    xs = sorted(xs)
    p = lambda q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731
    return f"{statistics.median(xs):.2f} / {p(0.95):.2f} / {xs[-1]:.2f}"


def report(r: dict) -> str:
    u, h, rss = r["user"], r["heavy_tally"], r["rss_mb"]
    lines = [
        "# Load test (`python benchmarks/load_app.py`)",
        "",
        f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}. "
        f"{r['users']} browser sessions changing inputs on random pages and {r['heavy']} sessions opening "
        f"the most expensive URLs, for {r['seconds']} s (all ended after {r['elapsed']:.0f} s), one "
        "streamlit server, one headless chromium, all on 127.0.0.1.",
        "",
        "| sessions | interactions | errors | rerun s p50 / p95 / max | page load s p50 / p95 / max |",
        "|---|---:|---:|---:|---:|",
        f"| users | {u.interactions} | {len(u.errors)} | {_quantiles(u.rerun_s)} | {_quantiles(u.load_s)} |",
        f"| heavy URLs | {h.interactions} | {len(h.errors)} | — | {_quantiles(h.load_s)} |",
        "",
        f"Server resident memory (streamlit and its children): start {rss[0]:.0f} MB, "
        f"peak {max(rss):.0f} MB, end {rss[-1]:.0f} MB.",
        "",
        "Rerun time is measured in the browser, from the change to the script being idle again, so it "
        "includes waiting for the two cores that all sessions share.",
    ]
    errors = u.errors + h.errors
    if errors:
        lines += ["", "Errors:", *(f"- {e}" for e in errors[:50])]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--heavy", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    result = asyncio.run(run(args))
    text = report(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    summary = {"interactions": result["user"].interactions + result["heavy_tally"].interactions,
               "errors": len(result["user"].errors) + len(result["heavy_tally"].errors),
               "rss_mb_start_peak_end": [round(result["rss_mb"][0]), round(max(result["rss_mb"])),
                                         round(result["rss_mb"][-1])]}
    print(text)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
