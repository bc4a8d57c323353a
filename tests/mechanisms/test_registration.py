"""One mechanism = one module + one registry line (issue 19 item 4): a test-only mechanism
(``extra_mechanism.LeaningCoin``) registered in a fresh interpreter is found by the CLI, the
Mechanisms page, noise calibration (page and CLI), the attack lab and the fuzz spaces, with no
other edit. Its numbers are checked against the exact answer of its two-atom law."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from dpviz.figures.tables import format_number
from tests.app.helpers import ROOT


def test_a_registered_mechanism_reaches_every_layer() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(ROOT / "tests/mechanisms/extra_mechanism.py"), str(ROOT)],
                         capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    found = json.loads(out.stdout)
    # the larger one-step loss is ln(2e^ε0/(1 + e^ε0)) (P-side); k = 4 steps at δ = 1e-5 stay below 4×
    e0 = 0.5
    one = max(math.log(2 / (1 + math.exp(-e0))), math.log((1 + math.exp(e0)) / 2))
    assert 0 < found["cli_mechanism"] <= 4 * one + 1e-9
    assert found["cli_plan_noise"] > 0
    assert f"**{format_number(found['cli_mechanism'])}**" in found["mechanisms_page"]  # the CLI's ε
    assert found["planner_page"] and found["planner_page"][0].startswith("ε0 = ")
    shown = float(found["planner_page"][0].split("=")[1])
    assert shown == pytest.approx(found["cli_plan_noise"], rel=1e-6)
    assert found["attack_page"] and found["attack"] >= 0
    assert found["fuzz"] == [True, True]


@pytest.mark.parametrize("sensitivity", [1, 2, 4, 7])
@pytest.mark.parametrize("eps0", [0.01, 0.3, 2.0])
def test_geometric_noise_spread_is_the_noise_of_its_loss_law(eps0: float, sensitivity: int) -> None:
    """The s.d. the planner shows is that of P(z) ∝ e^{−ε0|z|}, the noise whose loss law the route
    composes, for every Δ (it once used e^{−ε0/Δ}: 4× too much noise at Δ = 4)."""
    from dpviz.mechanisms.geometric import Geometric

    what, sd = Geometric(eps0=eps0, sensitivity=sensitivity).noise_spread()
    z = np.arange(-20_000, 20_001)
    w = np.exp(-eps0 * np.abs(z))
    assert what == "s.d."
    assert sd == pytest.approx(math.sqrt(float((w * z * z).sum() / w.sum())), rel=1e-9)
