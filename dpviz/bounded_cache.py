"""Values kept by key, bounded twice: by entries and by the bytes the values hold.

``functools.lru_cache`` bounds entries only. The exact optimum's atom sets range from a few dozen
floats to ``MAX_ATOMS`` (4 million atoms, about 64 MB), so an entry bound either thrashes on a page
that asks for many small sets (Database priors asks for 35 per rerun: the heterogeneous table's 11
choices, the ε-against-k series, the region) or could hold gigabytes of large ones; the database
priors' exact pairs (``dpviz.gce.exact``) range from a few classes to hundreds of thousands. Values
are dropped least recently used first while either bound is exceeded; a value larger than the byte
bound alone is not kept. ``BoundedStore`` keeps values a caller computes (``get`` / ``put``);
``BoundedCache`` is a one-argument function memoised in one.
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


class BoundedStore(Generic[K, V]):
    """At most ``entries`` values within ``max_bytes`` (``held(value)``: the bytes a value keeps alive,
    estimated from above), least recently used dropped first. Thread-safe (a server runs sessions in
    threads)."""

    def __init__(self, *, entries: int, max_bytes: float, held: Callable[[V], float]) -> None:
        self.entries, self.max_bytes, self.held = entries, max_bytes, held
        self._values: OrderedDict[K, tuple[V, float]] = OrderedDict()
        self._bytes = 0.0
        self._hits = self._misses = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` (now the most recently used), or None."""
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                self._hits += 1
                return self._values[key][0]
            self._misses += 1
            return None

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` (unless it alone is over the byte bound; a key already kept keeps its value),
        then drop the least recently used while a bound is exceeded."""
        size = float(self.held(value))
        if size > self.max_bytes:
            return
        with self._lock:
            if key not in self._values:
                self._values[key] = (value, size)
                self._bytes += size
            while len(self._values) > self.entries or self._bytes > self.max_bytes:
                _, (_, dropped) = self._values.popitem(last=False)
                self._bytes -= dropped

    def fresh(self) -> BoundedStore[K, V]:
        """An empty store with the same bounds (a test's own, so that nothing kept before is read)."""
        return BoundedStore(entries=self.entries, max_bytes=self.max_bytes, held=self.held)

    def __len__(self) -> int:
        with self._lock:
            return len(self._values)

    def values(self) -> list[V]:
        """The values kept, least recently used first."""
        with self._lock:
            return [value for value, _size in self._values.values()]

    def cache_info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self._hits, self._misses, self.entries, len(self._values), self._bytes)

    def cache_clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._bytes = 0.0
            self._hits = self._misses = 0


class BoundedCache(Generic[K, V]):
    """``BoundedCache(fn, entries=…, max_bytes=…, held=…)(key)`` is ``fn(key)``, kept in a
    ``BoundedStore``; two threads missing the same key both compute it, and one result is kept."""

    def __init__(self, fn: Callable[[K], V], *, entries: int, max_bytes: float,
                 held: Callable[[V], float]) -> None:
        self.__wrapped__ = fn
        self.store: BoundedStore[K, V] = BoundedStore(entries=entries, max_bytes=max_bytes, held=held)
        update_wrapper(self, fn)

    def __call__(self, key: K) -> V:
        value = self.store.get(key)
        if value is None:
            value = self.__wrapped__(key)
            self.store.put(key, value)
        return value

    def cache_info(self) -> CacheInfo:
        return self.store.cache_info()

    def cache_clear(self) -> None:
        self.store.cache_clear()


def bounded_cache(*, entries: int, max_bytes: float,
                  held: Callable[[V], float]) -> Callable[[Callable[[K], V]], BoundedCache[K, V]]:
    """Decorator form of :class:`BoundedCache`."""
    def wrap(fn: Callable[[K], V]) -> BoundedCache[K, V]:
        return BoundedCache(fn, entries=entries, max_bytes=max_bytes, held=held)
    return wrap
