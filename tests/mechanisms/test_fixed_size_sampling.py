"""Fixed-size sampling (a batch of m of n records without replacement, replace-one neighbours;
Balle-Barthe-Gaboardi 2018, Steinke §6.2; docs/MATH.md §23): brute force over every batch of a small
dataset for the geometric mechanism, and dp-accounting's PLD of the same pair (PoissonSampledDpEvent
under REPLACE_ONE at γ = m/n) and its RDP bound for SampledWithoutReplacementDpEvent."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

from dpviz.mechanisms.registry import make_sampled
from dpviz.mechanisms.subsampling import Subsampled
from dpviz.validation import ParameterError
from tests import oracles


def batches_law(*, n: int, m: int, eps0: float, record: int, span: int = 80) -> np.ndarray:
    """The output law of sum(batch) + geometric noise over z ∈ [−span, span], averaged over all
    C(n, m) batches; the person's record is ``record``, the n − 1 others are 0."""
    z = np.arange(-span, span + 1)
    a = math.exp(-eps0)
    batches = list(itertools.combinations(range(n), m))
    out = np.zeros(z.size)
    for b in batches:
        shift = record if 0 in b else 0  # the person is record 0
        out += (1 - a) / (1 + a) * a ** np.abs(z - shift)
    return out / len(batches)


@pytest.mark.parametrize(("n", "m", "eps0", "k"), [(5, 2, 0.7, 1), (6, 1, 1.5, 2), (4, 3, 0.4, 3)])
def test_geometric_against_every_batch(n, m, eps0, k):
    p1, q1 = batches_law(n=n, m=m, eps0=eps0, record=1), batches_law(n=n, m=m, eps0=eps0, record=-1)
    p, q = oracles.product_pair([(p1, q1)] * k)
    mech = make_sampled("geometric", sampling_rate=None, batch=(m, n), neighbouring="replace-one",
                        params={"eps0": eps0})
    assert isinstance(mech, Subsampled) and mech.rate == m / n
    for eps in (0.05, 0.3, 1.0):
        want = oracles.hockey_stick(p, q, eps)  # both directions (the pair is symmetric)
        got = _delta(mech, k, eps)
        assert got == pytest.approx(want, rel=1e-6, abs=1e-12), eps


def _delta(mech, k: int, eps: float) -> float:
    from dpviz.cli.mechanism import answer

    out = answer([(mech, k)], delta=None, epsilon=eps, h=None, budget=None, compare=False)
    lo, hi = out["delta_lower"], out["delta_upper"]
    assert lo <= hi * (1 + 1e-12)
    return hi


def test_gaussian_against_dp_accounting():
    """γ = 100/10,000, σ = 1.1, 1,000 steps: dp-accounting's PLD of the same pair lies in dpviz's
    certified interval, and its RDP bound for fixed-size sampling (WBK19) is above it."""
    out = subprocess.run([sys.executable, "-m", "dpviz", "mechanism", "gaussian", "--sigma", "1.1",
                          "--batch-size", "100", "--dataset-size", "10000", "--neighbouring", "replace-one",
                          "--k", "1000", "--delta", "1e-5"], capture_output=True, text=True, check=True)
    res = json.loads(out.stdout)
    pld = pld_privacy_accountant.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE)
    pld.compose(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 1000))
    ref = pld.get_epsilon(1e-5)
    assert res["epsilon_lower"] - 1e-4 <= ref <= res["epsilon_upper"] + 1e-4
    rdp = rdp_privacy_accountant.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    rdp.compose(dpa.SelfComposedDpEvent(
        dpa.SampledWithoutReplacementDpEvent(10000, 100, dpa.GaussianDpEvent(1.1)), 1000))
    assert res["epsilon_upper"] < rdp.get_epsilon(1e-5)
    assert res["mechanisms"][0]["sampling"] == "fixed-size" and res["mechanisms"][0]["batch_size"] == 100
    assert round(res["epsilon_upper"], 3) == 2.478


def test_bad_batches_name_the_field():
    with pytest.raises(ParameterError, match="batch_size"):
        make_sampled("gaussian", sampling_rate=None, batch=(11, 10), neighbouring="replace-one",
                     params={"sigma": 1.0})
    with pytest.raises(ParameterError, match="batch_size"):
        make_sampled("gaussian", sampling_rate=None, batch=(1, 10), neighbouring="add-remove",
                     params={"sigma": 1.0})  # fixed-size sampling replaces one record
    bad = subprocess.run([sys.executable, "-m", "dpviz", "mechanism", "gaussian", "--sigma", "1",
                          "--batch-size", "5", "--k", "3", "--delta", "1e-5"], capture_output=True, text=True)
    assert bad.returncode == 2 and "batch_size/dataset_size" in bad.stderr


def test_mix_spec_takes_a_fixed_size_entry():
    """The mix spec (CLI --spec, the page's mix editor: batch_size and dataset_size in the parameters
    cell) gives the same law as the single mechanism."""
    from dpviz.mechanisms.registry import part

    mech, count = part({"mechanism": "gaussian", "sigma": 1.1, "batch_size": 100, "dataset_size": 10000,
                        "neighbouring": "replace-one", "count": 7})
    single = make_sampled("gaussian", sampling_rate=None, batch=(100, 10000), neighbouring="replace-one",
                          params={"sigma": 1.1})
    assert (mech, count) == (single, 7)
    with pytest.raises(ParameterError, match=r"spec\[0\]\.batch_size/dataset_size"):
        part({"mechanism": "gaussian", "sigma": 1.1, "batch_size": 100, "count": 7})
