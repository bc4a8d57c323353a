"""Locust users that are students in a lesson, speaking Streamlit's own protocol (no browser).

    locust -f benchmarks/load/locustfile.py --headless --host http://127.0.0.1:8501 \\
        --users 20 --spawn-rate 2 --run-time 60s --stop-timeout 60 \\
        [--link 'Privacy_regions?k=30'] [--change-every 10]

Each user opens a lesson's link (a page with query parameters, as a teacher hands it out) in a new
session, then changes one of the page's inputs every ``--change-every`` seconds (the next change
starts that long after the previous one started, or at once if a rerun took longer). Locust
reports ``open <page>`` (the link until the run's ``script_finished``) and ``change <page>``
(the widget change until ``script_finished``); a run that shows an exception box or breaks off
counts as a failure. ``benchmarks/load/run.py`` drives the same users through the scenarios of
``benchmarks/results/load.md``.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from itertools import count
from pathlib import Path
from typing import Any

from locust import User, constant_pacing, events, task

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lessons import LESSON_LINKS
from protocol import ProtocolError, Run, Session


@events.init_command_line_parser.add_listener
def _options(parser: Any) -> None:
    parser.add_argument("--link", default="", help="every user opens this link (default: one of "
                        "the lesson links per user)")
    parser.add_argument("--change-every", type=float, default=10.0, help="seconds between changes")
    parser.add_argument("--no-assets", action="store_true",
                        help="do not fetch the page's script files on open")


@events.init.add_listener
def _configure(environment: Any, **_: Any) -> None:
    o = environment.parsed_options
    if o is not None:
        LessonUser.configure(link=o.link, change_every=o.change_every, assets=not o.no_assets)


class LessonUser(User):
    """A student: opens a link, then changes an input every ``change_every`` seconds (each
    action is one Locust task, so Locust's pacing puts the first change one period after the
    open, and a user waiting for its next change stops at once)."""

    link = ""
    assets = True
    seed = 1
    _numbers = count()
    wait_time = constant_pacing(10.0)

    @classmethod
    def configure(cls, *, link: str = "", change_every: float = 10.0, assets: bool = True,
                  seed: int = 1) -> None:
        cls.link, cls.assets, cls.seed = link, assets, seed
        cls.wait_time = constant_pacing(change_every)

    def on_start(self) -> None:
        self.number = next(self._numbers)
        self.rng = random.Random(self.seed * 100_003 + self.number)
        self.session = Session(self.host, assets=self.assets)
        self.lesson_link = self.link or LESSON_LINKS[self.number % len(LESSON_LINKS)]
        self.opened = False

    def on_stop(self) -> None:
        self.session.close()

    @task
    def step(self) -> None:
        if self.opened:
            self._record("change", lambda: self.session.change(self.rng))
        else:  # the first step, or the page never arrived: (re)load it, as a student would
            self.opened = self._record("open", lambda: self.session.open(self.lesson_link))

    def _record(self, what: str, action: Callable[[], Run]) -> bool:
        """Run one protocol action and report it to Locust as a request."""
        t0 = time.perf_counter()
        run, error = None, None
        try:
            run = action()
            if run.exceptions:
                error = ProtocolError(f"exception box: {run.exceptions[0]}")
        except Exception as exc:  # a timeout or a broken stream is a finding, not a crash
            error = exc
            self.session.close()
        elapsed = time.perf_counter() - t0 if run is None else run.seconds
        self.environment.events.request.fire(
            request_type="WS", name=f"{what} {self.session.page_name or 'home'}",
            response_time=elapsed * 1000, response_length=run.bytes if run else 0, exception=error,
            context={"kind": what, "user": self.number, "first_figure_s": run.first_figure_s if run else None,
                     "http_s": run.http_s if run else None})
        return error is None or run is not None
