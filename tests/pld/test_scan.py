"""The lower grid's two scans (``postprocess.windowed_masses``) and its per-piece round-off margin.

A top-down scan leaves its last, unbalanced symbol at the bottom of the law, stored up to h below
its loss. A Poisson-subsampled law (remove direction) has a density spike at its lowest loss
ln(1 − q): at q = 1e-4, σ = 1 the lower grid's implicit Q-mass was 3e-8 too large per step, and
after 10^6 steps the lower end of ε was 0.012 low (1.6 % of ε). The scan now runs towards the
lighter end. The margin of each balance was 1e-9 of the symbol's P-mass (a 1e-9 loss per step,
1e-3 after 10^6 steps); it is now the piece's computed round-off plus 1e-13.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz import jit
from dpviz.mechanisms import finite, gaussian, laplace
from dpviz.mechanisms.subsampling import subsample
from dpviz.pld import discretize, postprocess, scan
from dpviz.pld.accountant import compose, epsilon_bounds
from tests.pld.test_postprocess import SLACK, _exact_delta, pairs

ROOT = Path(__file__).resolve().parents[2]


def _excess(g) -> float:
    """Implicit Q-mass of a lower grid (Σ P'·e^{−loss}) minus the law's Q-mass (1): ≥ 0 when every
    symbol sits at or below its loss, and the first-order loss of the lower end when large."""
    return float(np.sum(g.mass * np.exp(-g.losses))) - 1.0


@pytest.mark.parametrize("upward", [False, True])
@settings(max_examples=25, deadline=None)
@given(pair=pairs, h=st.floats(0.01, 0.4), k=st.integers(1, 4),
       eps=st.lists(st.floats(-0.5, 3.0), min_size=3, max_size=3))
def test_both_scans_bracket_finite_pairs(upward, pair, h, k, eps):
    """lower ≤ exact (brute force) with either scan forced: each is a post-processing whose symbols
    sit at or below their loss, including the unbalanced symbols an upward scan moves down."""
    p = np.asarray(pair[0]) / sum(pair[0])
    q = np.asarray(pair[1]) / sum(pair[1])
    law = finite.loss_law(p=p.tolist(), q=q.tolist())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(postprocess, "scan_upward", lambda cells: upward)
        c = compose([(law, k)], h=h, tail=1e-18)
    for e in eps:
        exact = max(_exact_delta(p, q, k, e), _exact_delta(q, p, k, e))
        assert c.delta(e)[0] <= exact * (1 + SLACK) + 1e-15


@pytest.mark.parametrize("upward", [False, True])
@pytest.mark.parametrize(("q", "sigma", "h"), [(1e-4, 1.0, 1.6e-5), (0.01, 0.6, 5e-4), (0.3, 2.0, 0.01)])
def test_both_scans_sit_at_or_below_the_loss(monkeypatch, upward, q, sigma, h):
    """Implicit Q-mass ≥ the true Q-mass in both directions of subsampled Gaussians, either scan."""
    monkeypatch.setattr(postprocess, "scan_upward", lambda cells: upward)
    for law in subsample(gaussian.loss_law(sigma=sigma), rate=q):
        g = discretize.optimistic(law, h=h, tail=1e-25)
        assert _excess(g) >= -1e-12


@pytest.mark.parametrize("direction", [0, 1])
def test_small_q_lower_grid_is_tight(direction):
    """q = 1e-4, σ = 1 at h = 1.6e-5: implicit Q-mass within 1e-11 of the truth in both directions
    (3.2e-8 in the remove direction with the top-down scan; 1e-9 from the old margin)."""
    law = subsample(gaussian.loss_law(sigma=1.0), rate=1e-4)[direction]
    g = discretize.optimistic(law, h=1.6e-5, tail=1e-25)
    assert -1e-13 <= _excess(g) < 1e-11


def test_gaussian_margin_is_round_off_not_1e9():
    law = gaussian.loss_law(sigma=1.0)
    g = discretize.optimistic(law, h=0.01, tail=1e-25)
    assert -1e-13 <= _excess(g) < 1e-11


def test_long_small_q_composition_is_narrow():
    """q = 1e-4, σ = 1, 10^5 steps, δ = 1e-5: the certified interval is within the 1e-3 target
    (its lower end was 1.1 % low at the same grid with the top-down scan) and holds the value of
    a finer fixed grid."""
    law = subsample(gaussian.loss_law(sigma=1.0), rate=1e-4)[0]
    g = epsilon_bounds([(law, 100_000)], delta=1e-5)
    assert g.relative_width <= 1e-3
    fine = epsilon_bounds([(law, 100_000)], delta=1e-5, h=g.upper * 2e-5)
    assert g.lower <= fine.upper and fine.lower <= g.upper


def _interpreted() -> dict:
    return dict(scan.LOOPS.interpreted())


def _cells_of(law, h: float, tail: float = 1e-18) -> postprocess.HalfCells:
    lo, hi = law.support(tail)
    return postprocess.half_cell_terms(law, h, int(np.floor(lo / h)) - 1, int(np.ceil(hi / h)) + 1)


SCANNED = [  # (law, h, tail): subsampled Gaussians in both directions (the upward scan and its hand-over
    # to the downward one at small σ and q), out to tails of 1e-300 (cells whose Q-mass is imprecise),
    # Laplace, a finite pair with atoms on and off the grid
    *[(law, h, tail)
      for q, sigma, h, tail in [(1e-4, 1.0, 1.6e-5, 1e-18), (1.3e-4, 0.3, 2e-3, 1e-18),
                                (0.01, 0.6, 5e-4, 1e-18), (0.3, 2.0, 0.01, 1e-18), (0.01, 0.5, 2e-3, 1e-300)]
      for law in subsample(gaussian.loss_law(sigma=sigma), rate=q)],
    (laplace.loss_law(scale=2.0), 3e-3, 1e-18),
    (finite.loss_law(p=[0.5, 0.3, 0.2], q=[0.2, 0.3, 0.5]), 0.05, 1e-18),
]


def test_the_scanned_cases_reach_imprecise_q_masses():
    """The bit-for-bit cases include cells with an imprecise Q-mass (NaN ln Q, |A| = ∞): the scans'
    stopping and dropping branches."""
    assert any(np.isnan(_cells_of(law, h, tail).log_q).any() for law, h, tail in SCANNED)


@pytest.mark.parametrize(("law", "h", "tail"), SCANNED)
@pytest.mark.parametrize("upward", [False, True])
def test_compiled_scans_are_the_interpreted_code_bit_for_bit(law, h, tail, upward):
    cells = _cells_of(law, h, tail)
    found = []
    for compiled in (True, False):
        with scan.LOOPS.forced(compiled):
            found.append(postprocess.windowed_masses(cells, upward=upward))
    assert scan.LOOPS.compiled()["downward"] is not scan.downward  # Numba did compile them
    assert found[0].sum() > 0 and np.array_equal(found[0], found[1])


def test_the_upward_scan_hands_over_in_the_tested_cases():
    """At σ = 0.3, q = 1.3e-4 the far tail cannot repay the spike: the upward scan undoes a symbol and
    hands the rest to the downward scan (the branch the bit-for-bit test must reach)."""
    law = subsample(gaussian.loss_law(sigma=0.3), rate=1.3e-4)[0]
    cells = _cells_of(law, 2e-3)
    calls = []
    with pytest.MonkeyPatch.context() as mp:
        inner = scan.downward
        mp.setattr(scan, "downward", lambda *a: calls.append(a[-1]) or inner(*a))
        with scan.LOOPS.forced(False):  # the interpreted scans, the recording ``downward`` among them
            postprocess.windowed_masses(cells, upward=True)
    assert calls and calls[0] > 0


def test_the_scans_compile_where_no_cache_directory_is_writable(monkeypatch):
    """A read-only install without a home directory: Numba refuses ``cache=True`` (no locator), and
    the scans must still compile, per process."""
    from numba.core import caching
    monkeypatch.setattr(caching.CacheImpl, "_locator_classes", [])
    with pytest.raises(RuntimeError, match="no locator"):
        __import__("numba").njit(cache=True)(_plus_one)
    built = scan.LOOPS.build()
    law = subsample(gaussian.loss_law(sigma=0.3), rate=1.3e-4)[0]
    cells = _cells_of(law, 2e-3)
    for upward in (False, True):
        found = []
        with pytest.MonkeyPatch.context() as mp:  # this process's own build, not the loaded one
            mp.setattr(scan.LOOPS, "pick", lambda cells: (built, True))
            found.append(postprocess.windowed_masses(cells, upward=upward))
        with scan.LOOPS.forced(False):
            found.append(postprocess.windowed_masses(cells, upward=upward))
        assert np.array_equal(found[0], found[1])


def _plus_one(x: float) -> float:
    return x + 1.0


def test_where_numba_fails_the_interpreter_runs_the_scans(monkeypatch, caplog):
    """A compiler that fails (a broken install, an unsupported platform) costs speed, never an answer."""
    def broken():
        raise ImportError("no numba here")

    monkeypatch.setattr(scan.LOOPS, "build", broken)
    monkeypatch.setattr(scan.LOOPS, "_compiled", None)
    monkeypatch.setattr(scan.LOOPS, "_failed", False)
    assert scan.LOOPS.compiled() == _interpreted()
    assert scan.LOOPS.pick(1) == (_interpreted(), False)  # the interpreter's buffers, too
    assert "Numba failed (no numba here)" in caplog.text
    cells = _cells_of(laplace.loss_law(scale=2.0), 3e-3)
    assert postprocess.windowed_masses(cells, upward=False).sum() > 0


def test_a_process_loads_the_compiled_scans_after_compile_cells(monkeypatch):
    """The interpreter until the process has scanned ``COMPILE_CELLS`` half-cells, then (and from then
    on) the compiled scans; a process that loaded them uses them at once."""
    loaded = {"downward": "compiled down", "upward": "compiled up"}
    monkeypatch.setattr(scan.LOOPS, "build", lambda: loaded)
    monkeypatch.setattr(scan.LOOPS, "warm", lambda functions: None)
    monkeypatch.setattr(scan.LOOPS, "_compiled", None)
    monkeypatch.setattr(scan.LOOPS, "_steps", 0)
    assert scan.LOOPS.pick(1_000) == (_interpreted(), False)
    assert scan.LOOPS.pick(scan.COMPILE_CELLS - 2_000) == (_interpreted(), False)
    assert scan.LOOPS.pick(1_000) == (loaded, True)
    assert scan.LOOPS.pick(1) == (loaded, True)
    monkeypatch.setattr(scan.LOOPS, "_compiled", None)
    monkeypatch.setattr(scan.LOOPS, "_steps", 0)
    jit.compile_all()  # loaded (a server's start)
    assert scan.LOOPS.pick(1) == (loaded, True)


def test_a_short_query_does_not_load_numba():
    """A command-line query of a few thousand half-cells stays in the interpreter: Numba's 0.5 s of CPU
    and 150 MiB are not paid for 10 ms of scanning."""
    code = ("import sys\n"
            "from dpviz.mechanisms import gaussian\n"
            "from dpviz.mechanisms.subsampling import subsample_remove\n"
            "from dpviz.pld.accountant import epsilon_bounds\n"
            "law = subsample_remove(gaussian.loss_law(sigma=2.0), rate=0.01)\n"
            "g = epsilon_bounds([(law, 100)], delta=1e-5)\n"
            "assert g.upper > 0 and 'numba' not in sys.modules, sorted(sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
