"""Run ``dpviz.cli.main`` in-process and judge its answer (issue 14's CLI contract).

``run_cli(argv)`` captures stdout and stderr, turns every warning into an error for the call
and stops the call after ``timeout`` seconds (SIGALRM, main thread only). ``check(argv)``
then lists what is wrong with the outcome:

- no exception escapes ``main`` (``SystemExit(2)`` from argparse is allowed), exit code 0 or 2;
- exit 2: exactly one stderr line, and it names a field (``… must be …, got FIELD=…`` from
  ``ParameterError``, or argparse's own one-line usage errors);
- exit 0: nothing on stderr, stdout is strict JSON (no NaN/Infinity), and the numbers agree
  with each other (``consistency``).

Used by ``tests/fuzz/test_cli_fuzz.py`` and ``scripts/fuzz_cli.py``.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import signal
import time
import traceback
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from dpviz.cli import main
from dpviz.composition import METHODS
from dpviz.ui import field_text

REL_TOL = 1e-9
"""Relative tolerance of the consistency checks (bisection stopping rules are ≤ 1e-9)."""

ABS_TOL = 1e-12
"""Absolute tolerance for values near 0 (an "exact" ε of 0 comes out as ~1e-15 through logs)."""

_FIELD_MESSAGE = re.compile(r"^python -m dpviz [a-z -]+: error: (?P<field>[^\n]+?) must be .+, "
                            r"got (?P=field)=")
_ARGPARSE_MESSAGE = re.compile(r"^python -m dpviz[a-z -]*: error: (the following arguments are required: "
                               r"--|argument --|argument (command|kind)|unrecognized arguments: |"
                               r"one of the arguments --|invalid choice)")


class CallTimeout(Exception):
    """A CLI call ran past its time guard."""


@dataclass
class Outcome:
    """What one call did."""

    argv: list[str]
    code: int | None
    stdout: str
    stderr: str
    seconds: float
    error: str | None = None  # "Type: message" of an escaped exception (or a warning)
    where: str | None = None  # innermost frame of that exception
    timed_out: bool = False
    problems: list[str] = field(default_factory=list)
    category: str = "ok"  # ok | traceback | timeout | bad-exit | bad-stderr | invalid-json | inconsistent


def _no_constant(token: str) -> float:
    raise ValueError(f"non-JSON number {token}")


def strict_json(text: str) -> Any:
    """``json.loads`` rejecting NaN and ±Infinity."""
    return json.loads(text, parse_constant=_no_constant)


@contextlib.contextmanager
def time_guard(seconds: float | None) -> Iterator[None]:
    """Raise ``CallTimeout`` inside the block after ``seconds`` (no guard for None or 0)."""
    if not seconds:
        yield
        return

    def _fire(signum, frame):
        raise CallTimeout(f"call exceeded {seconds:g} s")

    old = signal.signal(signal.SIGALRM, _fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_cli(argv: Sequence[str], *, timeout: float | None = 30.0) -> Outcome:
    """``main(argv)`` with captured streams, warnings as errors and a time guard."""
    out, err = io.StringIO(), io.StringIO()
    code: int | None = None
    error = where = None
    timed_out = False
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            with time_guard(timeout):
                code = main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except CallTimeout as exc:
            timed_out, error = True, str(exc)
        except BaseException as exc:  # any escape is the finding
            error = f"{type(exc).__name__}: {exc}"
            frames = traceback.extract_tb(exc.__traceback__)
            inner = [f for f in frames if "/dpviz/" in f.filename] or frames
            if inner:
                f = inner[-1]
                where = f"{f.filename.split('/dpviz/')[-1]}:{f.lineno} in {f.name}"
    return Outcome(argv=list(argv), code=code, stdout=out.getvalue(), stderr=err.getvalue(),
                   seconds=time.perf_counter() - t0, error=error, where=where, timed_out=timed_out)


def check(argv: Sequence[str], *, timeout: float | None = 30.0) -> Outcome:
    """Run and judge one call; ``Outcome.problems`` is empty when the contract holds."""
    o = run_cli(argv, timeout=timeout)
    if o.timed_out:
        o.category, o.problems = "timeout", [o.error or "timeout"]
        return o
    if o.error is not None:
        o.category, o.problems = "traceback", [f"{o.error} at {o.where}"]
        return o
    if o.code not in (0, 2):
        o.category, o.problems = "bad-exit", [f"exit code {o.code}"]
        return o
    if o.code == 2:
        lines = o.stderr.splitlines()
        if len(lines) != 1:
            o.problems.append(f"exit 2 with {len(lines)} stderr lines: {o.stderr[:400]!r}")
        elif not (_FIELD_MESSAGE.match(lines[0]) or _ARGPARSE_MESSAGE.match(lines[0])):
            o.problems.append(f"exit 2 message names no field: {lines[0][:300]!r}")
        elif (m := _FIELD_MESSAGE.match(lines[0])) and not _given(m.group("field"), argv, lines[0]):
            o.problems.append(f"exit 2 names {m.group('field')!r}, which the user did not give: "
                              f"{lines[0][:300]!r}")
        elif m and field_text(m.group("field")) != m.group("field"):  # a page would show it as code
            o.problems.append(f"exit 2 field {m.group('field')!r} holds text the user typed: "
                              f"{lines[0][:300]!r}")
        if o.stdout:
            o.problems.append("exit 2 with output on stdout")
        o.category = "bad-stderr" if o.problems else "ok"
        return o
    if o.stderr:
        o.category, o.problems = "bad-stderr", [f"exit 0 with stderr: {o.stderr[:400]!r}"]
        return o
    try:
        data = strict_json(o.stdout)
    except ValueError as exc:
        o.category, o.problems = "invalid-json", [f"invalid JSON: {exc}"]
        return o
    o.problems = consistency(argv, data)
    o.category = "inconsistent" if o.problems else "ok"
    return o


def _given(field: str, argv: Sequence[str], line: str = "") -> bool:
    """Whether a ParameterError's field names something the user typed (or left out when it was
    required: "eps0/k", "prior/cap", or "got k=None": gce's k needed with --prior or --cap). Rows
    of --levels are checked as eps0, delta0 and k."""
    flags = {a[2:].split("=")[0].replace("-", "_") for a in argv if a.startswith("--")}
    if "levels" in flags:
        flags |= {"eps0", "delta0", "k"}
    names = {t.replace("-", "_") for t in re.split(r"[/ \[.]", field) if t}  # spec[2].sigma: spec
    missing = line.endswith(f"got {field}=None")  # the CLI says the field is missing, by name
    return bool(names & flags) or "/" in field or missing  # "a/b": one of two alternatives was missing


# ---------------------------------------------------------------------- logical consistency

def _le(a: float, b: float) -> bool:
    """a ≤ b up to REL_TOL relative (and ABS_TOL absolute)."""
    return a <= b + REL_TOL * max(abs(a), abs(b)) + ABS_TOL


def _num(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _target(argv: Sequence[str], flag: str) -> float | None:
    """The value after the last ``flag`` in argv (argparse keeps the last), as a number."""
    found = None
    for i, a in enumerate(argv[:-1]):
        if a == flag:
            found = float(argv[i + 1])
    return found


def consistency(argv: Sequence[str], data: Any) -> list[str]:
    """Logical checks of a successful answer, per subcommand."""
    command = argv[0] if argv else ""
    if not isinstance(data, dict):
        return [f"top level is {type(data).__name__}, not an object"]
    if command == "compose":
        return _compose(data, delta=_target(argv, "--delta"), epsilon=_target(argv, "--epsilon"))
    if command == "gce":
        return _gce(data, delta=_target(argv, "--delta"))
    if command == "mechanism":
        return _mechanism(data)
    if command == "attack":
        return _attack(data)
    return []


def _attack(data: dict[str, Any]) -> list[str]:
    """The certified ε is a number ≥ 0; above the proven ε only as a flagged chance event (the
    certificate is a confidence bound, the proof holds for every outcome), and the flag is set
    exactly when the certified ε is above the proven one."""
    emp, proven = data.get("empirical_epsilon"), data.get("proven_epsilon")
    if not isinstance(emp, (int, float)) or emp < 0:
        return [f"empirical_epsilon {emp!r}"]
    above = isinstance(proven, (int, float)) and emp > proven
    if data.get("exceeds_proven") is not above:
        return [f"exceeds_proven {data.get('exceeds_proven')!r} with empirical ε {emp}, proven {proven}"]
    if above and "confidence" not in str(data.get("note", "")):
        return [f"empirical ε {emp} > proven ε {proven} without a note on the confidence"]
    return []


_KINDS = {"exact", "upper", "lower", "infeasible"}


def _guarantee_shape(key: str, g: Any) -> list[str]:
    if not isinstance(g, dict):
        return [f"{key}: not an object"]
    out = []
    kind = g.get("kind")
    if kind not in _KINDS:
        out.append(f"{key}: kind {kind!r}")
    eps, dlt = g.get("epsilon"), g.get("delta")
    if kind == "infeasible":
        if not g.get("reason"):
            out.append(f"{key}: infeasible without a reason")
        return out
    if not _num(eps) or not _num(dlt):
        out.append(f"{key}: {kind} with epsilon={eps!r}, delta={dlt!r}")
        return out
    if eps < 0:
        out.append(f"{key}: negative ε {eps!r}")
    if not 0 <= dlt <= 1:
        out.append(f"{key}: δ {dlt!r} outside [0, 1]")
    return out


def _compose(data: dict[str, Any], *, delta: float | None, epsilon: float | None) -> list[str]:
    out = []
    if set(data) != set(METHODS):
        return [f"keys {sorted(data)}"]
    for key, g in data.items():
        out += _guarantee_shape(key, g)
        # optimal is exact, or (over the cost budget) the best closed form, saying why
        want = {"exact", "infeasible", "upper"} if key == "optimal" else {"upper", "infeasible"}
        if isinstance(g, dict) and g.get("kind") not in want:
            out.append(f"{key}: kind {g.get('kind')!r}, expected one of {sorted(want)}")
    if out:
        return out
    opt = data["optimal"]
    if opt["kind"] == "upper" and not opt.get("reason"):
        out.append("optimal is an upper bound without a reason")
    feasible = {k: g for k, g in data.items() if k != "optimal" and g["kind"] != "infeasible"}
    if opt["kind"] == "infeasible":
        # below the floor 1 − Π(1 − δ_i) nothing is feasible: every other method's δ ≥ its floor
        if "below" in opt.get("reason", "") and feasible:
            out.append(f"optimal infeasible ({opt['reason']}) but {sorted(feasible)} give a value")
        return out
    for key, g in feasible.items():
        if delta is not None:  # every sound (ε, δ ≤ target) has ε ≥ the optimal ε at the target
            if g["delta"] > delta * (1 + REL_TOL):
                out.append(f"{key}: δ {g['delta']!r} above the target {delta!r}")
            elif not _le(opt["epsilon"], g["epsilon"]):
                out.append(f"optimal ε {opt['epsilon']!r} > {key} ε {g['epsilon']!r}")
        elif epsilon is not None and not _le(opt["delta"], g["delta"]):
            out.append(f"optimal δ {opt['delta']!r} > {key} δ {g['delta']!r} at ε = {epsilon!r}")
    if delta is not None and opt["delta"] > delta * (1 + REL_TOL):
        out.append(f"optimal δ {opt['delta']!r} above the target {delta!r}")
    return out


def _gce(data: dict[str, Any], *, delta: float | None) -> list[str]:
    out = []
    for key, g in data.items():
        out += _guarantee_shape(key, g)
        if isinstance(g, dict) and g.get("directions") not in ("both", "forward", "reverse"):
            out.append(f"{key}: directions {g.get('directions')!r}")
    if out or "exact" not in data or delta is None:
        return out
    ex = data["exact"]
    if ex["kind"] != "exact":
        return out
    if ex["delta"] > delta * (1 + REL_TOL):
        out.append(f"exact δ {ex['delta']!r} above the target {delta!r}")
    for key, g in data.items():
        # a bound proved in both directions at δ ≤ the target bounds the two-sided exact ε
        if key == "exact" or g["kind"] not in ("upper", "exact") or g["directions"] != "both":
            continue
        if g["delta"] <= delta * (1 + REL_TOL) and not _le(ex["epsilon"], g["epsilon"]):
            out.append(f"exact ε {ex['epsilon']!r} > {key} ε {g['epsilon']!r} (δ {g['delta']!r})")
    return out


def _interval(name: str, lo: object, up: object) -> list[str]:
    out = []
    for label, v in (("lower", lo), ("upper", up)):
        if v is not None and not _num(v):
            out.append(f"{name}: {label} {v!r}")
        elif v is not None and v < 0:
            out.append(f"{name}: negative {label} {v!r}")
    if _num(lo) and _num(up) and not _le(lo, up):
        out.append(f"{name}: lower {lo!r} > upper {up!r}")
    return out


def _mechanism(data: dict[str, Any]) -> list[str]:
    out = _interval("result", data.get("epsilon_lower"), data.get("epsilon_upper"))
    if data.get("epsilon") != data.get("epsilon_upper"):
        out.append(f"epsilon {data.get('epsilon')!r} is not the upper end {data.get('epsilon_upper')!r}")
    if data.get("epsilon_upper") is None and not data.get("reason"):
        out.append("no upper ε and no reason")
    routes = data.get("routes") or {}
    for key, r in routes.items():
        out += _interval(key, r.get("lower"), r.get("upper"))
        if r.get("exact") is not None:
            out += _interval(f"{key} (lower, exact)", r.get("lower"), r.get("exact"))
            out += _interval(f"{key} (exact, upper)", r.get("exact"), r.get("upper"))
    # every certified lower bound is below every sound upper bound (the truth is between)
    lowers = [(k, r.get("lower")) for k, r in routes.items() if k != "generic" and _num(r.get("lower"))]
    uppers = [(k, r.get("upper")) for k, r in routes.items() if _num(r.get("upper"))]
    lowers.append(("result", data.get("epsilon_lower")))
    uppers.append(("result", data.get("epsilon_upper")))
    for kl, lo in lowers:
        for ku, up in uppers:
            if _num(lo) and _num(up) and not _le(lo, up):
                out.append(f"{kl} lower {lo!r} > {ku} upper {up!r}")
    return out
