"""The server a load run measures: ``streamlit run app.py`` on a free 127.0.0.1 port, or
``scripts/serve.sh --replicas N`` (N servers behind nginx), started and stopped by the run."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(base: str, timeout: float = 240.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"no healthy server at {base} after {timeout:.0f} s")


def _warm(base: str) -> None:
    """Run app.py once (Streamlit's script health check): the server's first imports."""
    try:
        with urllib.request.urlopen(f"{base}/_stcore/script-health-check", timeout=90) as r:
            if r.read().strip() == b"ok":
                return
    except OSError as exc:
        raise RuntimeError(f"the first run of app.py at {base} failed: {exc}") from exc
    raise RuntimeError(f"the first run of app.py at {base} failed")


class Server:
    """``streamlit run app.py`` on a free port, or ``scripts/serve.sh --replicas N``; ``pids``
    are the Streamlit processes, ``nginx_pids`` nginx's (charged as server CPU too: it serves
    the page's script and style files)."""

    def __init__(self, replicas: int) -> None:
        self.run_dir = Path(tempfile.mkdtemp(prefix="dpviz-load-"))
        port = _free_port()
        self.base = f"http://127.0.0.1:{port}"
        log = open(self.run_dir / "server.log", "w")  # noqa: SIM115  (closed in stop)
        if replicas == 0:
            cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                   "--server.address", "127.0.0.1", "--server.headless", "true",
                   "--server.scriptHealthCheckEnabled", "true"]
        else:
            cmd = ["bash", "scripts/serve.sh", "--replicas", str(replicas), "--port", str(port),
                   "--run-dir", str(self.run_dir / "serve")]
        self.log = log
        self.process = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_healthy(self.base)
            if replicas == 0:  # one run of app.py before the first visitor, as scripts/serve.sh does
                _warm(self.base)
        except RuntimeError as exc:
            self.stop(keep_log=True)
            raise RuntimeError(f"{exc}; its log: {self.run_dir / 'server.log'}") from exc
        self.nginx_pids: list[int] = []  # nginx's master (its workers are its children)
        if replicas == 0:
            self.pids = [self.process.pid]
        else:
            self.pids = [int(p) for p in (self.run_dir / "serve" / "replicas.pid").read_text().split()]
            self.nginx_pids = [int((self.run_dir / "serve" / "nginx.pid").read_text())]

    def stop(self, keep_log: bool = False) -> None:
        stop_server(self.process)
        self.log.close()
        if not keep_log:
            shutil.rmtree(self.run_dir, ignore_errors=True)


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """Stop ``streamlit run`` or ``scripts/serve.sh`` (its replicas and nginx) and wait for it.

    SIGTERM, not SIGINT: a process started in the background by a non-interactive shell
    (`python … &`) ignores SIGINT, and so does the serve.sh it starts, which cannot trap a signal
    ignored at its start: it was killed after 30 s and its replicas and nginx kept running
    (tests/serve/test_serve.py)."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
