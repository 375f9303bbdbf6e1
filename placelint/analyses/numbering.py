"""Numbering non-negative integer keys over arrays by a table over their values instead of
a sort, where the values span little more than the keys: ``ShapeInfo.io_keys``' input
entries (a few dozen values over 10^5-10^6 inputs) and ``parallelism_cost.estimate_ops``'
rows. ``np.unique`` sorts; at 10^6 expensive ops that was 0.1 s a call."""

from __future__ import annotations

import numpy as np

__all__ = ["unique_inverse", "first_indices"]


def unique_inverse(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` of non-negative integers (the inverse flat):
    by a table over the values when they span at most a few times the keys."""
    top = int(key.max(initial=-1)) + 1
    if top > 4 * key.size + 1024:
        values, inverse = np.unique(key, return_inverse=True)
        return values, inverse.reshape(-1)
    present = np.zeros(top, dtype=bool)
    present[key] = True
    return np.flatnonzero(present), (np.cumsum(present) - 1)[key]


def first_indices(key: np.ndarray, count: int) -> np.ndarray:
    """Where each of ``0 .. count - 1`` first occurs in ``key`` (each occurs; what
    ``np.unique(key, return_index=True)[1]`` gives for such keys)."""
    first = np.full(count, key.size, dtype=np.int64)
    np.minimum.at(first, key, np.arange(key.size, dtype=np.int64))
    return first
