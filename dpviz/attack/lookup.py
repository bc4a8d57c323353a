"""``np.searchsorted`` of many unsorted keys in one sorted array, the same indices without a binary
search per key nor a sort of the keys (issue 20: the attack lab's draws by inversion, one lookup per
trial, ``dpviz.attack.binomial`` and ``sampling.binned_sum``).

The keys' range [0, top] is cut into equal cells; each cell remembers where a point just below its
left edge falls in the sorted array (never past the answer of a key in the cell, whatever the
rounding of key·cells/top: the edge is lowered by four units of rounding, and the first cell starts
at 0), and a key steps from there over the values it passes. Only keys whose cell holds a value
move at all; keys still moving after a few steps (a cell crowded with values, a key above top) are
searched by numpy.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import NDArray

MIN_CELLS, MAX_CELLS = 1 << 12, 1 << 16
"""Cells: eight per value, within these (their table is 32-512 KiB); with few values almost no key
shares its cell with one."""

STEPS = 8
"""Steps over values in a cell before the keys left are handed to ``np.searchsorted``."""

EPS = float(np.finfo(float).eps)


class Lookup:
    """``Lookup(values, top, side)(keys) == np.searchsorted(values, keys, side)`` for keys in
    [0, top] (``values`` sorted, non-decreasing; a key outside is still answered exactly, slower)."""

    def __init__(self, values: NDArray[np.float64], top: float, side: Literal["left", "right"]) -> None:
        self.values = np.asarray(values, dtype=float)
        self.side = side
        self.cells = min(MAX_CELLS, max(MIN_CELLS, 1 << math.ceil(math.log2(8 * self.values.size + 1))))
        self.scale = self.cells / top if top > 0 else 0.0
        edges = np.arange(self.cells) / self.scale * (1 - 4 * EPS) if top > 0 else np.zeros(self.cells)
        self.start = np.searchsorted(self.values, edges, side=side).astype(np.intp)
        self.start[0] = 0  # keys below 0 land in the first cell
        self.above = np.append(self.values, math.inf)  # +∞ past the end: a step never reads outside

    def __call__(self, keys: NDArray[np.float64]) -> NDArray[np.intp]:
        cell = (keys * self.scale).astype(np.intp)
        np.clip(cell, 0, self.cells - 1, out=cell)
        x = self.start[cell]  # at most the answer: step up while the key is past values[x]
        # right: the index x with values[x-1] <= key < values[x]; left: values[x-1] < key <= values[x]
        past = (keys >= self.above[x]) if self.side == "right" else (keys > self.above[x])
        up = np.flatnonzero(past)
        for _ in range(STEPS):
            if not up.size:
                break
            x[up] += 1
            k = keys[up]
            up = up[k >= self.above[x[up]]] if self.side == "right" else up[k > self.above[x[up]]]
        if up.size:  # crowded cells, keys above top: numpy's own search
            x[up] = np.searchsorted(self.values, keys[up], side=self.side)
        return x
