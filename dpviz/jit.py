"""Sequential loops that run in the interpreter or compiled by Numba, with the same results bit for bit.

A few steps of dpviz are sequential, data-dependent loops that array operations cannot express: the
optimistic PLD grid's scans (docs/MATH.md §16, ``dpviz.pld.scan``), the upper envelope of a region's
lines and the thinning of a drawn boundary (§13, ``dpviz.regions.walks``). The interpreter runs them
on Python lists at about 1 µs a step; Numba compiles the same functions to code about 100 times
faster, but costs a process about 0.3 s of CPU and 150 MiB to load (and about 3 s once per
installation to compile). So each group of loops (``Loops``) runs in the interpreter until its process
has done ``threshold`` steps of it, and compiled from then on: a short command-line query never pays
for Numba, a long one does once, and a server loads every group at start (``compile_all``), so that
no student's click pays for it. A group whose compilation fails runs in the interpreter (a warning
in the log): slower, never another answer.
"""

from __future__ import annotations

import logging
import threading
import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

Functions = Mapping[str, Callable[..., Any]]

_log = logging.getLogger(__name__)
_GROUPS: list[Loops] = []


class Loops:
    """Functions of one module (``names``, callees before callers) run in the interpreter or compiled.

    The compiled copy of each function is made from its own code in a namespace where the functions
    it calls are the compiled ones, and where ``replaced`` stands in for a helper Numba cannot compile
    (``bisect.bisect_right``, which the interpreter runs in C, by CPython's own loop written out in
    Python: the same index for every input)."""

    def __init__(self, namespace: dict[str, Any], names: tuple[str, ...], *, threshold: int, what: str,
                 warm: Callable[[Functions], None], replaced: Functions | None = None) -> None:
        self.namespace, self.names, self.threshold, self.what = namespace, names, threshold, what
        self.warm = warm
        """Runs the compiled functions once on a tiny input of the real argument types (Numba
        compiles, or loads from its cache, at a function's first call)."""
        self.replaced = dict(replaced or {})
        self._steps = 0
        self._compiled: Functions | None = None
        self._failed = False
        self._lock = threading.Lock()
        _GROUPS.append(self)

    def interpreted(self) -> Functions:
        """The functions as written (the module's current ones)."""
        return {name: self.namespace[name] for name in self.names}

    def pick(self, steps: int) -> tuple[Functions, bool]:
        """The functions for a run of ``steps`` steps and whether they are the compiled ones: compiled
        once they are loaded, or once this run and those before it reach ``threshold``."""
        with self._lock:
            self._steps += steps
            enough = self._steps >= self.threshold
        if enough or self._compiled is not None:
            functions = self.compiled()
            return functions, not self._failed
        return self.interpreted(), False

    @contextmanager
    def forced(self, compiled: bool) -> Iterator[None]:
        """Every run in the block takes the compiled (``compiled``) or the interpreted functions,
        whatever the process has run so far: for the tests that compare the two bit for bit."""
        chosen = self.compiled() if compiled else self.interpreted()
        original = self.pick
        self.pick = lambda steps: (chosen, compiled)  # type: ignore[method-assign]
        try:
            yield
        finally:
            self.pick = original  # type: ignore[method-assign]

    def compiled(self) -> Functions:
        """The compiled functions (``build``, then ``warm``), built once per process, one thread at a
        time; the interpreted ones, with a warning in the log, where Numba fails."""
        with self._lock:
            if self._compiled is None:
                try:
                    built = self.build()
                    self.warm(built)
                    self._compiled = built
                except Exception as exc:  # any failure of the compiler: the interpreter runs them
                    _log.warning("%s run in the interpreter: Numba failed (%s)", self.what, exc)
                    self._compiled, self._failed = self.interpreted(), True
            return self._compiled

    def build(self) -> Functions:
        """The functions compiled by Numba, their machine code cached beside the module (or in the
        user's cache directory) so that later processes load it instead of compiling it; compiled
        afresh in each process where no cache directory is writable (Numba refuses ``cache=True``
        there)."""
        import numba

        space = dict(self.namespace)
        for name, fn in self.replaced.items():
            space[name] = _njit(numba, _copy(fn, space))
        for name in self.names:
            space[name] = _njit(numba, _copy(self.namespace[name], space))
        return {name: space[name] for name in self.names}


def _copy(fn: Callable[..., Any], space: dict[str, Any]) -> types.FunctionType:
    code = fn.__code__
    return types.FunctionType(code, space, fn.__name__, fn.__defaults__, fn.__closure__)


def _njit(numba: Any, fn: types.FunctionType) -> Callable[..., Any]:
    try:
        return numba.njit(cache=True)(fn)
    except RuntimeError:  # "cannot cache function …: no locator available"
        return numba.njit(fn)


def compile_all() -> None:
    """Load (or, once per installation, compile) every group of loops imported so far, as a server
    does at start."""
    for group in list(_GROUPS):
        group.compiled()
