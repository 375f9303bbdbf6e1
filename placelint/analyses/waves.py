"""Counting down over the integer edge arrays a wave of nodes at a time: the array form of
a worklist pass in which a node joins once its last counted edge has (``folding.py``:
constants forward along data edges; ``parallelism_scope.step_mask``: the init/restore/save
part backward from its targets; ``member_network.py``: the nodes between the expensive
ops). Each wave is a few array operations over the edges at
the wave's nodes, so the whole pass is linear in the edges the set reaches, with one
round of numpy calls per wave instead of Python per node."""

from __future__ import annotations

import numpy as np

__all__ = ["Grouped"]


class Grouped:
    """``other`` grouped by ``key``: ``other[starts[v]:starts[v + 1]]`` for ``key == v``."""

    __slots__ = ("other", "starts")

    def __init__(self, n: int, key: np.ndarray, other: np.ndarray):
        if key.size > 1 and not bool((key[1:] >= key[:-1]).all()):
            by = np.argsort(key, kind="stable")
            key, other = key[by], other[by]
        self.other = other
        self.starts = np.searchsorted(key, np.arange(n + 1))

    def at(self, wave: np.ndarray) -> np.ndarray:
        """The ``other`` ends of the edges at the nodes of ``wave`` (each node's run, end
        to end)."""
        lo = self.starts[wave]
        count = self.starts[wave + 1] - lo
        total = int(count.sum())
        return self.other[np.repeat(lo - (np.cumsum(count) - count), count) + np.arange(total)]

    def count_down(self, waiting: np.ndarray, wave: np.ndarray) -> np.ndarray:
        """Subtracts from ``waiting`` one per edge at the nodes of ``wave``; returns the
        nodes whose count those edges brought to zero (sorted)."""
        hit, k = np.unique(self.at(wave), return_counts=True)
        waiting[hit] -= k
        return hit[waiting[hit] == 0]

    def closure(self, mask: np.ndarray) -> np.ndarray:
        """``mask`` (bool per node) and every node an edge chain leads to from it."""
        out = mask.copy()
        last = np.empty(out.size, dtype=np.int64)   # where a node last occurs in a wave
        wave = np.flatnonzero(out)
        while wave.size:
            wave = self.at(wave)
            wave = wave[~out[wave]]
            at = np.arange(wave.size)
            last[wave] = at
            wave = wave[last[wave] == at]       # each node once, without a sort
            out[wave] = True
        return out

