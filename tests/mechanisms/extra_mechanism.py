"""A test-only mechanism and what registering it reaches (issue 19: one mechanism = one module + one
registry line). Run as a script in a fresh interpreter (``test_registration.py``): it adds the
registry line, then asks every layer for the mechanism and prints what each answered, as JSON."""

from __future__ import annotations

import contextlib
import io
import json
import math
import sys
from functools import partial
from typing import Any

import numpy as np

from dpviz.mechanisms.base import Mechanism
from dpviz.mechanisms.registry import MECHANISMS
from dpviz.params import Param
from dpviz.pld.law import LossLaw
from dpviz.validation import check_positive


class LeaningCoin(Mechanism):
    """One bit: 1 with probability e^ε0/(1 + e^ε0) when the record is in, ½ when it is out (an
    asymmetric finite pair; pure ε-DP with ε = ln(2e^ε0/(1 + e^ε0)) one way, ln((1 + e^ε0)/2) the other)."""

    key = "leaning-coin"
    title = "Leaning coin (test only)"
    required = ("eps0",)
    finite = True
    noise = "eps0"
    more_is_noise = False
    attackable = True
    params = (Param("eps0", "lean ε0", 0.5, partial(check_positive, field="eps0", maximum=20.0),
                    "how far the coin leans", span=(1e-2, 5.0)),)

    def loss_law(self) -> LossLaw:
        hi = 1.0 / (1.0 + math.exp(-self.eps0))
        p, q = np.array([hi, 1.0 - hi]), np.array([0.5, 0.5])
        return LossLaw.from_atoms(f"leaning coin ε0={self.eps0:g}", np.log(p / q), p, q, symmetric=False)


def _cli(*argv: str) -> dict[str, Any]:
    from dpviz.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    assert code == 0, (argv, code)
    return json.loads(out.getvalue())


def _page(path: str, **query: str) -> Any:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(path, default_timeout=300)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def report(root: str) -> dict[str, Any]:
    MECHANISMS[LeaningCoin.key] = LeaningCoin  # the one registry line
    key = LeaningCoin.key
    found: dict[str, Any] = {}
    found["cli_mechanism"] = _cli("mechanism", key, "--eps0", "0.5", "--k", "4", "--delta", "1e-5")["epsilon"]
    plan = _cli("plan", "noise", key, "--epsilon", "1", "--delta", "1e-5", "--k", "4")
    found["cli_plan_noise"] = plan["eps0"]
    at = _page(f"{root}/pages/4_Mechanisms.py", mechanism=key, eps0="0.5", k="4", sampling_rate="1")
    found["mechanisms_page"] = " ".join(m.value for m in at.markdown if "ε" in m.value and "**" in m.value)
    at = _page(f"{root}/pages/5_Plan_a_budget.py", epsilon="1", k="4")
    noise = [el.value for el in at.dataframe if not el.proto.editing_mode][2]
    found["planner_page"] = [str(a) for m, a in zip(noise["mechanism"], noise["answer"], strict=True)
                             if m == LeaningCoin.title]
    at = _page(f"{root}/pages/6_Attack_lab.py", mechanism=key, eps0="0.5", k="4", trials="1000")
    found["attack_page"] = [m.value for m in at.metric]
    from dpviz.attack import make_attack, run_attack

    found["attack"] = run_attack(make_attack(key, eps0=0.5, k=4, trials=1000, seed=1, delta=1e-5)).to_json()[
        "empirical_epsilon"]
    sys.path.insert(0, root)
    from tests.fuzz import space

    found["fuzz"] = [key in space.calibrated(), key in space.attackable()]
    return found


if __name__ == "__main__":
    json.dump(report(sys.argv[1]), sys.stdout)
