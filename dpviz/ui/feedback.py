"""Saying at once that a change will take a while (issue 20, "Feedback").

The core estimates the work of an expensive call before it runs (``dpviz.budget``: counted work ×
measured unit times) and words the notice (``dpviz.budget.notice``); this module only decides whether
the answer is already cached, in which case nothing is said. Streamlit offers no look into a cache
without calling it, so the calls made through ``dpviz.ui.cached`` are mirrored here: per function,
the last ``CACHE_ENTRIES`` distinct argument lists, in least-recently-used order, as the resource
cache keeps them. A mirror that drifts from the cache (cleared by hand, arguments that cannot be
hashed) costs at most one notice too many or one too few, never a wrong number.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from dpviz.budget import Cost, notice

CACHE_ENTRIES = 64
"""Bound on every cache of ``dpviz.ui.cached`` (and so on its mirror here): old entries are evicted,
memory stays flat."""

_SEEN: dict[Hashable, OrderedDict[Hashable, None]] = {}


def _function(fn: Callable[..., Any]) -> Hashable:
    """What names ``fn`` across reruns, as Streamlit's caches name it: its file and qualified name. A
    function a page defines (the attack lab's ``run``) is a new object at every rerun of the page's
    script, while its cache lives on; keyed by the object, every rerun read as a first call."""
    inner = getattr(fn, "__wrapped__", fn)
    code = getattr(inner, "__code__", None)
    return fn if code is None else (code.co_filename, inner.__qualname__)


def _key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Hashable | None:
    """The arguments as Streamlit's caches key them: keyword arguments named ``_…`` are left out."""
    key = (args, tuple(sorted((name, v) for name, v in kwargs.items() if not name.startswith("_"))))
    try:
        hash(key)
    except TypeError:  # a list or a dict among the arguments: not tracked (a notice may show)
        return None
    return key


def remember(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *,
             entries: int = CACHE_ENTRIES) -> None:
    """Record that the cache of ``fn`` (``dpviz.ui.cached``, or a page's own ``st.cache_data`` of
    ``entries`` entries) answered these arguments (most recently used now)."""
    key = _key(args, kwargs)
    if key is None:
        return
    seen = _SEEN.setdefault(_function(fn), OrderedDict())
    seen[key] = None
    seen.move_to_end(key)
    while len(seen) > entries:
        seen.popitem(last=False)


def is_cached(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> bool:
    """Whether ``dpviz.ui.cached(fn)(*args, **kwargs)`` will answer from the cache (see module)."""
    key = _key(args, kwargs)
    return key is not None and key in _SEEN.get(_function(fn), {})


def pending(estimate: Callable[[], Cost], fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str | None:
    """The notice to show before ``dpviz.ui.cached(fn)(*args, **kwargs)``: the core's words for the
    cost ``estimate()`` returns ("Refining with the PLD grid: about 3 s") when it is above about a
    second and the answer is not cached yet, else None (the estimate is then not even made: tens of
    milliseconds for the PLD's). The page shows it at once and replaces it by the answer."""
    if is_cached(fn, *args, **kwargs):
        return None
    return notice(estimate())
