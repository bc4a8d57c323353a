"""Prior constructors: weights, validation messages that name the field."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpviz.gce import hypotheses as H
from dpviz.validation import ParameterError


def test_level_weights_of_the_named_priors() -> None:
    k = 6
    w = np.exp(H.uniform_nonzero(k=k).log_w)
    assert w[0] == 0 and w[1:] == pytest.approx([math.comb(k, j) / (2**k - 1) for j in range(1, k + 1)])
    w = np.exp(H.at_least(k=k, k2=4).log_w)
    n = sum(math.comb(k, j) for j in range(4, k + 1))
    assert w == pytest.approx([0, 0, 0, 0] + [math.comb(k, j) / n for j in range(4, k + 1)])
    assert np.exp(H.below(k=k, k2=4).log_w)[4:].sum() == 0
    assert H.point_zero(k=k).is_zero and not H.point_one(k=k).is_zero


def test_uniform_nonzero_is_fine_for_huge_k() -> None:
    w = H.uniform_nonzero(k=1_000_000).log_w
    # ln C(10^6, j) via gammaln(~10^6) ≈ 1.3e7 carries ~1e-9 absolute rounding, hence 1e-8
    assert np.isfinite(w[1:]).all() and math.isclose(float(np.logaddexp.reduce(w)), 0.0, abs_tol=1e-8)


def test_to_explicit_enumerates_exchangeable_priors() -> None:
    e = H.to_explicit(H.at_least(k=4, k2=3))
    assert len(e.support) == 5 and all(sum(b) >= 3 for b, _ in e.support)
    assert math.isclose(sum(w for _, w in e.support), 1.0)


@pytest.mark.parametrize(("make", "field"), [
    (lambda: H.explicit([((0, 1), 0.5), ((1, 1), 0.4)]), "weights"),
    (lambda: H.explicit([((0, 2), 1.0)]), "b"),
    (lambda: H.explicit([((0, 1), 1.0), ((1,), 0.0)]), "b"),
    (lambda: H.point((0,) * 17), "k"),
    (lambda: H.at_least(k=5, k2=6), "k2"),
    (lambda: H.exchangeable(k=2, level_weights=[0.5, 0.5]), "level_weights"),
    (lambda: H.exchangeable(k=2, level_weights=[0.5, 0.6, -0.1]), "level_weights"),
    (lambda: H.uniform_nonzero(k=0), "k"),
])
def test_bad_priors_name_the_field(make, field: str) -> None:
    with pytest.raises(ParameterError) as err:
        make()
    assert err.value.field == field


def test_duplicate_vectors_are_merged() -> None:
    e = H.explicit([((1, 0), 0.25), ((1, 0), 0.25), ((0, 1), 0.5)])
    assert dict(e.support) == {(0, 1): 0.5, (1, 0): 0.5}


@pytest.mark.parametrize("make,kwargs", [(H.point_zero, {}), (H.uniform_nonzero, {}),
                                         (H.at_least, {"k2": 3}), (H.below, {"k2": 3})])
def test_small_paper_priors_are_made_once_and_read_as_new_ones(make, kwargs):
    """Issue 20: a view asks for the same prior about 70 times; up to REMEMBERED_K databases it is
    made once (with its cached ln π(b)) and shared, holding the floats of one made afresh; a larger
    one, or a k that is not an int, is made anew."""
    first = make(k=40, **kwargs)
    assert make(k=40, **kwargs) is first
    fresh = make.__wrapped__(k=40, **kwargs)
    assert fresh is not first
    for name in ("log_level_weights", "log_v", "levels"):
        assert np.array_equal(getattr(first, name), getattr(fresh, name))
    assert (first.family, first.label, first.threshold, first.is_zero) == \
        (fresh.family, fresh.label, fresh.threshold, fresh.is_zero)
    assert not first.log_level_weights.flags.writeable and not first.log_v.flags.writeable
    big = H.REMEMBERED_K + 1
    assert make(k=big, **kwargs) is not make(k=big, **kwargs)
    assert make(k=np.int64(40), **kwargs) is not first
    assert make(k=40, **{key: np.int64(v) for key, v in kwargs.items()}) is not first or not kwargs
    with pytest.raises(ParameterError):
        make(k=0, **kwargs)
