"""A memo of a one-argument function bounded twice: by entries and by the bytes its values hold.

``functools.lru_cache`` bounds entries only. The exact optimum's atom sets range from a few dozen
floats to ``MAX_ATOMS`` (4 million atoms, about 64 MB), so an entry bound either thrashes on a page
that asks for many small sets (Database priors asks for 35 per rerun: the heterogeneous table's 11
choices, the ε-against-k series, the region) or could hold gigabytes of large ones. Values are
dropped least recently used first while either bound is exceeded; a value larger than the byte
bound alone is returned and not kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import update_wrapper
from typing import Generic, NamedTuple, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class CacheInfo(NamedTuple):
    """As ``functools.lru_cache``'s, with the bytes held."""

    hits: int
    misses: int
    maxsize: int
    currsize: int
    nbytes: float


class BoundedCache(Generic[K, V]):
    """``BoundedCache(fn, entries=…, max_bytes=…, held=…)(key)`` is ``fn(key)``, remembered.
    ``held(value)``: the bytes a value keeps alive, estimated from above. Thread-safe (a server runs
    sessions in threads); two threads missing the same key both compute it, and one result is kept."""

    def __init__(self, fn: Callable[[K], V], *, entries: int, max_bytes: float,
                 held: Callable[[V], float]) -> None:
        self.__wrapped__ = fn
        self.entries, self.max_bytes, self.held = entries, max_bytes, held
        self._values: OrderedDict[K, tuple[V, float]] = OrderedDict()
        self._bytes = 0.0
        self._hits = self._misses = 0
        self._lock = threading.Lock()
        update_wrapper(self, fn)

    def __call__(self, key: K) -> V:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                self._hits += 1
                return self._values[key][0]
            self._misses += 1
        value = self.__wrapped__(key)
        size = float(self.held(value))
        if size <= self.max_bytes:
            with self._lock:
                if key not in self._values:
                    self._values[key] = (value, size)
                    self._bytes += size
                while len(self._values) > self.entries or self._bytes > self.max_bytes:
                    _, (_, dropped) = self._values.popitem(last=False)
                    self._bytes -= dropped
        return value

    def cache_info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self._hits, self._misses, self.entries, len(self._values), self._bytes)

    def cache_clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._bytes = 0.0
            self._hits = self._misses = 0


def bounded_cache(*, entries: int, max_bytes: float,
                  held: Callable[[V], float]) -> Callable[[Callable[[K], V]], BoundedCache[K, V]]:
    """Decorator form of :class:`BoundedCache`."""
    def wrap(fn: Callable[[K], V]) -> BoundedCache[K, V]:
        return BoundedCache(fn, entries=entries, max_bytes=max_bytes, held=held)
    return wrap
