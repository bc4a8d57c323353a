"""``scripts/serve.sh --replicas 2``: the browserless load generator drives six sessions through
nginx; each gets its page and its reruns, each stays on one replica, and both replicas serve."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = 6
LINK = "Composition_curves?eps0=0.2&delta=1e-5&k_max=1000"  # a page whose cold open is cheap


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
            return r.read().strip() == b"ok"
    except OSError:
        return False


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """Two replicas behind nginx on a free port; stopped with ``serve.sh stop`` afterwards."""
    port, run_dir = _free_port(), tmp_path / "run"
    base = f"http://127.0.0.1:{port}"
    with open(tmp_path / "serve.log", "w") as log:
        process = subprocess.Popen(
            ["bash", "scripts/serve.sh", "--replicas", "2", "--port", str(port), "--run-dir", str(run_dir)],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            end = time.monotonic() + 240
            while not _healthy(base):
                if process.poll() is not None or time.monotonic() > end:
                    pytest.fail(f"serve.sh did not come up: {(tmp_path / 'serve.log').read_text()[-2000:]}")
                time.sleep(0.5)
            yield base, run_dir
        finally:
            subprocess.run(["bash", "scripts/serve.sh", "stop", "--run-dir", str(run_dir)], cwd=ROOT,
                           timeout=60, check=False)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
    assert process.returncode is not None and not (run_dir / "serve.pid").exists()
    pids = [int(p) for p in re.findall(r"pid (\d+)", (tmp_path / "serve.log").read_text())]
    assert len(pids) == 2 and not any(Path(f"/proc/{p}").exists() for p in pids), "a replica outlived stop"


def _replicas(run_dir: Path) -> dict[str, str]:
    """Replica name (the cookie's value) → its address, from the generated nginx.conf."""
    conf = (run_dir / "nginx.conf").read_text()
    return dict(re.findall(r"upstream (r\d+) \{ server ([\d.]+:\d+); \}", conf))


def test_two_replicas_serve_every_session_on_one_replica_each(served: tuple[str, Path],
                                                              tmp_path: Path) -> None:
    base, run_dir = served
    out = tmp_path / "load.json"
    pids = (run_dir / "replicas.pid").read_text().split()
    subprocess.run(
        [sys.executable, "benchmarks/load/run.py", "--url", base,
         *(a for p in pids for a in ("--server-pid", p)),
         "--class-size", "0", "--ramp", str(SESSIONS), "--lesson-link", LINK, "--change-every", "3",
         "--changes", "2", "--seconds", "27", "--out", "-", "--json", str(out)],
        cwd=ROOT, check=True, timeout=300, capture_output=True)
    (lesson,) = json.loads(out.read_text())["scenarios"]

    # every session got its page and its reruns, without an error
    assert lesson["errors"] == []
    kinds = Counter((s["user"], s["kind"]) for s in lesson["samples"])
    assert {u for u, _ in kinds} == set(range(SESSIONS))
    for user in range(SESSIONS):
        assert kinds[user, "open"] == 1 and kinds[user, "change"] >= 2, (user, kinds)
    assert all(s["bytes"] > 0 for s in lesson["samples"])

    # each websocket went to the replica its browser's cookie named, and both replicas had some
    replicas = _replicas(run_dir)
    assert len(replicas) == 2
    served_by: dict[str, set[str]] = defaultdict(set)
    streams = []
    for line in (run_dir / "access.log").read_text().splitlines():
        _, route, upstream, status, _, request = line.split(" ", 5)
        if "/_stcore/stream" in request:
            streams.append((route, upstream, status))
        served_by[route].add(upstream)
    assert len(streams) == SESSIONS, streams
    for route, upstream, status in streams:
        assert status == "101" and replicas.get(route) == upstream, (route, upstream, status)
    assert {upstream for _, upstream, _ in streams} == set(replicas.values())
    for name, address in replicas.items():  # every request that named a replica went to it
        assert served_by[name] <= {address}, (name, served_by[name])


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, exited but not yet reaped by its parent, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_sigterm_stops_replicas_and_nginx_even_when_sigint_is_ignored(tmp_path: Path) -> None:
    """A benchmark started in the background by a non-interactive shell (`python … &`) ignores SIGINT,
    and so does the serve.sh it starts (bash cannot trap a signal ignored at its start): stopped by
    SIGINT it was killed after 30 s and left its replica and nginx running. SIGTERM, which the
    benchmarks now send (``stop_server`` in benchmarks/load/server.py), stops them all."""
    import signal

    port, run_dir = _free_port(), tmp_path / "run"
    with open(tmp_path / "serve.log", "w") as log:
        process = subprocess.Popen(
            ["bash", "scripts/serve.sh", "--replicas", "1", "--port", str(port), "--run-dir", str(run_dir)],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        try:
            end = time.monotonic() + 240
            while not _healthy(f"http://127.0.0.1:{port}"):
                if process.poll() is not None or time.monotonic() > end:
                    pytest.fail(f"serve.sh did not come up: {(tmp_path / 'serve.log').read_text()[-2000:]}")
                time.sleep(0.5)
            pids = [int(p) for p in (run_dir / "replicas.pid").read_text().split()]
            pids.append(int((run_dir / "nginx.pid").read_text()))
            assert all(_alive(p) for p in pids)
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=60) != 0  # stopped by the signal, not killed
            end = time.monotonic() + 30
            while any(_alive(p) for p in pids) and time.monotonic() < end:
                time.sleep(0.2)
            assert not [p for p in pids if _alive(p)]
        finally:
            if process.poll() is None:
                subprocess.run(["bash", "scripts/serve.sh", "stop", "--run-dir", str(run_dir)], cwd=ROOT,
                               timeout=60, check=False)
