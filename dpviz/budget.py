"""Bounded work per request: a time and memory budget, and the sentence shown when a route is over it.

Every expensive route estimates its cost *before* it starts, from a cheap count of the work
it will do (atoms summed, count classes, recursion cells, grid bins × log bins of FFTs)
multiplied by a per-unit constant measured on the development machine (``UNIT_SECONDS``,
``UNIT_BYTES``; re-measure with ``python benchmarks/calibrate_budget.py``). The counts are
exact or close; the constants are good to a factor of about 2, so a budget is a soft limit
of that accuracy, never a timer (the estimate decides, before any work). Above the budget
the route is not run: the caller answers with the best cheap sound bound for the same quantity
and says why, in the words of :meth:`Budget.reason`.

The budget is a value passed down explicitly (``budget: Budget | None = None``; ``None`` means
the command line's default), never global state. Pages use ``PAGE`` (about 2 s, 256 MiB), the
CLI ``CLI`` (60 s, 1 GiB) or the ``--budget SECONDS`` the user gives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from dpviz.validation import ParameterError, check_positive

UNIT_SECONDS: dict[str, float] = {
    # composition/atoms.py: one binomial loss atom kept (window search, Loader weights, prefix sums,
    # ε search; KOV Thm 3.3)
    "binomial_atom": 7.0e-7,
    # composition/optimal.py: one atom·log2(atoms) of a product of binomials (outer sums, argsort)
    "product_atom": 1.3e-8,
    # mechanisms/exact_route.py, exact route of finite laws: one entry (atom × outcome) of the enumerated
    # count vectors with its multinomial log-mass and loss (3.2e-7 to 6e-7 from 6e6 down to 2e4 entries)
    "exact_cell": 4.0e-7,
    # … and one entry (support point × outcome × step) of its lattice recursion (a log-sum and a
    # max-plus update per entry, numpy calls per outcome and step)
    "lattice_cell": 4.0e-8,  # measured 1.2e-8 to 4.2e-8 (2.5e4 to 1e7 entries, geometric Δ = 2 to 8)
    # gce/classes.py: one outcome-count class (multinomial, g, two sorted loss-atom tables, search)
    "gce_class": 6.0e-7,
    # gce/classes.py: one cell of the log-space recursion for g (two logaddexp per cell)
    "gce_cell": 6.0e-8,
    # gce/threshold.py: one class n_B of the threshold priors' walks (a step of φ, of U and of D, both
    # families at once, in the interpreter; the start values' Loader tails)
    "gce_threshold_term": 1.0e-6,
    # gce/exact.py: one point of the exact region's convex hull (a Python loop)
    "gce_hull_point": 2.5e-7,
    # pld/discretize.py, per cell and discretisation (pessimistic and optimistic averaged):
    # a symmetric law with a continuous part (Gaussian, Laplace) …
    "pld_cell": 4.0e-7,
    # … an asymmetric one (Poisson-subsampled; the optimistic hull may peel many times: measured
    # 2e-7 to 8e-6 across laws, this is the upper middle of that range) …
    "pld_cell_asymmetric": 5.0e-6,
    # … and a symmetric law of atoms only (randomized response, geometric)
    "pld_atom_cell": 3.0e-8,
    # pld/grid.py: one bin·log2(bins) of the planned composed grid, per FFT convolution
    "fft_bin_log": 1.5e-9,
    # pld/grid.py via composition/atoms.py: one δ(ε) evaluation of one composed grid, and one atom
    # within a unit of loss above ε (summed exactly, ≈ 1/h of them)
    "delta_eval": 6.0e-5,
    "delta_eval_atom": 3.0e-8,
    # buckets: one bucket of a law put into buckets (tail masses on both sides) …
    "bucket_cell": 5.0e-7,
    # … and one bucket·log2(buckets) of a bucket convolution (both bounds, error terms)
    "bucket_log": 1.4e-8,
    # attack/run.py: one trial under both hypotheses (one draw each, then the certificate's and the
    # curve's sorts and counts; measured 0.2 to 0.8 µs across the one-draw samplers) …
    "attack_trial": 1.0e-6,
    # … and one per-step draw of a sampler that draws the steps one by one (measured 50 to 75 ns)
    "attack_step_draw": 1.0e-7,
}
"""Seconds per unit of work on one core of the development machine (2 cores shared with other
jobs): ``benchmarks/calibrate_budget.py``, best of 5, between a quiet and a loaded run (the
end-to-end estimates then land within a factor of about 2 of the measured times)."""

UNIT_BYTES: dict[str, float] = {
    "binomial_atom": 128.0,  # loss, ln p, two prefix sums and the Loader temporaries (float64)
    "product_atom": 64.0,  # outer sums, argsort indices, sorted copies, prefix sums
    "exact_cell": 48.0,  # count vectors (int64, built twice while concatenated), log-gamma and products
    "gce_class": 128.0,  # class counts, multinomials, two ln-mass columns, two atom tables
    "gce_cell": 16.0,  # two recursion layers alive at a time (counted as cells of the widest layer)
    # per grid point of one discretisation: the optimistic one (pld/postprocess.py, windowed_masses)
    # scans two half-cells per point through eleven Python lists of floats (a pointer and a float
    # object each): 1,536 bytes traced, ~1.9 KB resident (σ = 0.0033, q = 0.0043: 950k points,
    # 1.8 GB, where 160 bytes, the pessimistic one's numpy arrays, admitted it under 1 GiB)
    "pld_cell": 2048.0,
    "pld_cell_asymmetric": 2048.0,
    "pld_atom_cell": 2048.0,
    "fft_bin": 64.0,  # real FFT buffers of the padded length, input and output grids
    "bucket_cell": 0.0,
    "bucket_log": 96.0,  # per bucket: A-mass, two EC arrays and FFT buffers
    "attack_trial": 80.0,  # both statistics, the pooled copy and the sorts (64 bytes traced)
    "attack_step_draw": 32.0,  # a chunk's draws and their sums (per draw held, ≤ CHUNK_DRAWS)
}
"""Peak bytes per unit (numpy allocations traced with ``tracemalloc``, rounded up)."""


@dataclass(frozen=True)
class Cost:
    """Estimated wall time (seconds, one core) and peak memory (bytes) of a route, and what it is."""

    seconds: float
    bytes: float = 0.0
    what: str = ""

    def __add__(self, other: Cost) -> Cost:
        what = ", ".join(w for w in (self.what, other.what) if w)
        return Cost(self.seconds + other.seconds, max(self.bytes, other.bytes), what)


def cost_of(unit: str, count: float, *, what: str = "", memory_units: float | None = None) -> Cost:
    """``count`` units of work of one kind; memory for ``memory_units`` (default ``count``)."""
    held = count if memory_units is None else memory_units
    return Cost(seconds=UNIT_SECONDS[unit] * count, bytes=UNIT_BYTES.get(unit, 0.0) * held, what=what)


ZERO = Cost(0.0)


@dataclass(frozen=True)
class Budget:
    """At most ``seconds`` of estimated work and ``max_bytes`` of estimated memory per route.

    ``hint`` ends the reason shown when a route is over budget: how the user can raise it.
    """

    seconds: float
    max_bytes: float
    hint: str = "raise --budget"

    def allows(self, estimated_seconds: float, estimated_bytes: float = 0.0) -> bool:
        """Whether a route of this estimated cost may run."""
        return estimated_seconds <= self.seconds and estimated_bytes <= self.max_bytes

    def admits(self, cost: Cost) -> bool:
        return self.allows(cost.seconds, cost.bytes)

    def reason(self, cost: Cost) -> str:
        """"not computed: about 40 s of work, above the 2 s budget (raise --budget)"."""
        parts = []
        if cost.seconds > self.seconds:
            parts.append(f"about {_seconds(cost.seconds)} of work, above the {_seconds(self.seconds)} budget")
        if cost.bytes > self.max_bytes:
            parts.append(f"about {_bytes(cost.bytes)} of memory, above the {_bytes(self.max_bytes)} budget")
        if not parts:
            parts.append(f"about {_seconds(cost.seconds)} of work")
        what = f" ({cost.what})" if cost.what else ""
        return f"not computed{what}: " + " and ".join(parts) + (f" ({self.hint})" if self.hint else "")

    def share(self, fraction: float) -> Budget:
        """The same budget with ``fraction`` of its time (for one of several routes of a view)."""
        return replace(self, seconds=self.seconds * fraction)


CLI = Budget(seconds=60.0, max_bytes=float(1 << 30), hint="raise --budget")
"""Default for the command line and for library calls that pass no budget."""

PAGE = Budget(seconds=2.0, max_bytes=float(256 << 20),
              hint="the command line computes it with a larger --budget")
"""Default for the Streamlit pages: one rerun stays within a few seconds and a bounded memory."""

PAGE_SEARCH = Budget(seconds=25.0, max_bytes=PAGE.max_bytes, hint=PAGE.hint)
"""A search on a page (the planner's smallest noise): its ~25 forward evaluations each get the 1 s
the Mechanisms page gives its one forward PLD route, so the planner certifies the noise that page
certifies (with ``PAGE`` each got 0.08 s: a coarser grid, σ = 1.90315 where 1.895231 fits). The
estimate is pessimistic: such a search measured about 3 s of one core at k = 100,000, q = 0.004."""


def for_search(budget: Budget) -> Budget:
    """The budget of a search asked with ``budget``: ``PAGE_SEARCH`` for the page's, else the same."""
    return PAGE_SEARCH if budget == PAGE else budget


BUDGET_MAX_SECONDS = 86_400.0

MEMORY_SCALE_MAX = 4.0
"""``--budget`` above 60 s raises the memory cap in proportion, up to 4 GiB."""


def resolve(budget: Budget | None) -> Budget:
    """``None`` (no budget given) means the command line's default."""
    return CLI if budget is None else budget


def from_seconds(value: object, *, field: str = "budget") -> Budget:
    """The CLI's ``--budget SECONDS``: the time limit given, the CLI memory cap scaled alike
    (never below 1 GiB, at most ``MEMORY_SCALE_MAX`` times it)."""
    seconds = check_positive(value, field=field, maximum=BUDGET_MAX_SECONDS)
    scale = min(max(1.0, seconds / CLI.seconds), MEMORY_SCALE_MAX)
    return Budget(seconds=seconds, max_bytes=CLI.max_bytes * scale, hint=CLI.hint)


class OverBudget(ParameterError):
    """A route was not run because its estimated cost is above the budget; ``reason`` says so."""

    def __init__(self, cost: Cost, budget: Budget) -> None:
        super().__init__("budget", f"{budget.seconds:g} s",
                         f"at least about {_seconds(cost.seconds)} and {_bytes(cost.bytes)} "
                         f"for {cost.what or 'this computation'}")
        self.cost = cost
        self.budget = budget

    @property
    def reason(self) -> str:
        return self.budget.reason(self.cost)


def check(cost: Cost, budget: Budget | None) -> None:
    """Raise :class:`OverBudget` when ``cost`` is above ``budget`` (``None``: the CLI default)."""
    b = resolve(budget)
    if not b.admits(cost):
        raise OverBudget(cost, b)


NOTICE_SECONDS = 1.0
"""A page says at once what will run and for how long when its estimate is above this (issue 20)."""


def notice(cost: Cost) -> str | None:
    """"Refining with the PLD grid: about 3 s" (``cost.what`` and its estimated time) when the
    estimate is above ``NOTICE_SECONDS``; None for work that is quick anyway. An estimate, good to a
    factor of about 2 (``UNIT_SECONDS``), so a notice never promises a time to the second."""
    if not cost.seconds > NOTICE_SECONDS:
        return None
    return f"{cost.what or 'Computing'}: about {_seconds(cost.seconds)}"


def _seconds(s: float) -> str:
    if not math.isfinite(s):
        return "unbounded time"
    if s < 1.0:
        return f"{s:.2g} s"
    if s < 120.0:
        return f"{s:.0f} s"
    if s < 7200.0:
        return f"{s / 60:.0f} min"
    if s < 2 * 86_400.0:
        return f"{s / 3600:.0f} h"
    return f"{s / 86_400:.2g} days"


def _bytes(b: float) -> str:
    if not math.isfinite(b):
        return "unbounded memory"
    for unit, size in (("GiB", 2.0**30), ("MiB", 2.0**20), ("KiB", 2.0**10)):
        if b >= size:
            return f"{b / size:.0f} {unit}" if b / size >= 10 else f"{b / size:.1f} {unit}"
    return f"{b:.0f} bytes"
