"""``analyses/numbering.py`` numbers keys by a table over their values where ``np.unique``
sorted them: the same values, inverse and first indices, on random keys over small and
large ranges (the table, and the sort it falls back to)."""

from __future__ import annotations

import numpy as np
import pytest

from placelint.analyses.numbering import first_indices, unique_inverse


@pytest.mark.parametrize("size,top", [(0, 1), (1, 1), (50, 3), (1000, 40), (1000, 10**6),
                                      (5000, 5000)])
def test_unique_inverse_equals_numpy(size, top):
    key = np.random.default_rng(size + top).integers(0, top, size=size).astype(np.int64)
    values, inverse = unique_inverse(key)
    want_values, want_inverse = np.unique(key, return_inverse=True)
    assert values.tolist() == want_values.tolist()
    assert inverse.tolist() == want_inverse.reshape(-1).tolist()


@pytest.mark.parametrize("seed", range(10))
def test_first_indices_equal_numpy(seed):
    rng = np.random.default_rng(seed)
    # numbered as they first appear, as estimate_ops numbers its rows
    raw = rng.integers(0, int(rng.integers(1, 50)), size=int(rng.integers(0, 2000)))
    number: dict[int, int] = {}
    key = np.array([number.setdefault(v, len(number)) for v in raw.tolist()], dtype=np.int64)
    assert (first_indices(key, len(number)).tolist()
            == np.unique(key, return_index=True)[1].tolist())
