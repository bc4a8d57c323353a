"""``dpviz.bounded_cache``: a memo bounded by entries and by bytes (the exact optimum's atom sets,
``optimal.loss_atoms``), least recently used dropped first."""

from __future__ import annotations

import threading

import numpy as np

from dpviz.bounded_cache import BoundedCache


def _counting(sizes: dict[int, int]) -> tuple[BoundedCache[int, np.ndarray], list[int]]:
    calls: list[int] = []

    def make(key: int) -> np.ndarray:
        calls.append(key)
        return np.zeros(sizes.get(key, 1))

    return BoundedCache(make, entries=3, max_bytes=100.0, held=lambda v: float(v.nbytes)), calls


def test_values_are_remembered_and_the_least_recently_used_goes_first() -> None:
    cache, calls = _counting({})
    for key in (1, 2, 3, 1, 4, 1, 2):  # 4 evicts 2 (1 was used after 3); 2 is then built again
        cache(key)
    assert calls == [1, 2, 3, 4, 2]
    info = cache.cache_info()
    assert (info.hits, info.misses, info.currsize, info.nbytes) == (2, 5, 3, 24.0)


def test_bytes_bound_drops_old_values_and_never_keeps_one_too_large() -> None:
    cache, calls = _counting({1: 6, 2: 6, 3: 20})  # 48, 48 and 160 bytes against a bound of 100
    cache(1), cache(2)
    assert cache.cache_info().currsize == 2
    big = cache(3)
    assert big.size == 20 and cache.cache_info().currsize == 2  # returned, not kept
    cache(4)  # 8 more bytes: 104 > 100, so 1 (the oldest) goes
    cache(2)
    cache(1)
    assert calls == [1, 2, 3, 4, 1]
    assert cache.cache_info().nbytes <= 100.0


def test_clear_and_wrapped() -> None:
    cache, calls = _counting({})
    cache(1)
    cache.cache_clear()
    assert cache.cache_info() == (0, 0, 3, 0, 0.0)
    cache(1)
    assert calls == [1, 1]
    assert cache.__wrapped__(7).size == 1 and calls[-1] == 7 and cache.cache_info().currsize == 1


def test_threads_agree_on_the_bounds() -> None:
    cache, _ = _counting({})

    def work(offset: int) -> None:
        for i in range(300):
            cache((i * 7 + offset) % 11)

    threads = [threading.Thread(target=work, args=(j,)) for j in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    info = cache.cache_info()
    assert info.currsize <= 3 and info.nbytes == 8.0 * info.currsize
    assert info.hits + info.misses == 1200


def test_loss_atoms_keeps_a_priors_rerun() -> None:
    """The Database priors page asks for 35 atom sets per rerun (its heterogeneous table's choices,
    its series, its region): all kept, so a second pass builds none."""
    from dpviz.composition import optimal
    from dpviz.composition.levels import Level

    many = [(Level(epsilon=0.1, delta=1e-6, count=c), Level(epsilon=0.5, delta=0.0, count=10 - c % 10))
            for c in range(300, 335)] + [(Level(epsilon=0.1, delta=0.0, count=c),) for c in (406, 548, 741)]
    optimal.loss_atoms.cache_clear()
    first = [optimal.loss_atoms(lv) for lv in many]
    misses = optimal.loss_atoms.cache_info().misses
    again = [optimal.loss_atoms(lv) for lv in many]
    assert optimal.loss_atoms.cache_info().misses == misses == len(many)
    assert all(a is b for a, b in zip(first, again, strict=True))
