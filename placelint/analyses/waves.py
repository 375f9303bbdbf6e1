"""Counting down over the integer edge arrays a wave of nodes at a time: the array form of
a worklist pass in which a node joins once its last counted edge has (``folding.py``:
constants forward along data edges; ``parallelism_scope.step_mask``: the init/restore/save
part backward from its targets; ``member_network.py``: the nodes between the expensive
ops). A wave is a few array operations over the edges at the wave's nodes: one round of
numpy calls per wave instead of Python per node. A wave narrower than ``NARROW`` costs that
round for a few nodes (a chain of 10^5 constants was 10^5 rounds, 1.8 s), so the pass
goes on one node at a time from there, and back to waves once ``NARROW`` nodes wait to be
followed: linear in the edges the set reaches either way."""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["Grouped", "NARROW"]

#: waves of fewer nodes go on one node at a time (a numpy round costs ~20 us, a node in
#: Python ~1 us)
NARROW = 32


class Grouped:
    """``other`` grouped by ``key``: ``other[starts[v]:starts[v + 1]]`` for ``key == v``."""

    __slots__ = ("other", "starts")

    def __init__(self, n: int, key: np.ndarray, other: np.ndarray):
        if key.size > 1 and not bool((key[1:] >= key[:-1]).all()):
            other = other[np.argsort(key, kind="stable")]
        self.other = other
        # (the counts summed up: quicker than a search of each node in the sorted keys)
        self.starts = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(key, minlength=n), out=self.starts[1:])

    def at(self, wave: np.ndarray) -> np.ndarray:
        """The ``other`` ends of the edges at the nodes of ``wave`` (each node's run, end
        to end)."""
        lo = self.starts[wave]
        count = self.starts[wave + 1] - lo
        total = int(count.sum())
        return self.other[np.repeat(lo - (np.cumsum(count) - count), count) + np.arange(total)]

    def spread(self, marked: np.ndarray, waiting: np.ndarray | None = None,
               accept: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
        """Marks, in ``marked`` (bool per node, changed in place and returned), every node
        the edges lead to from the marked ones. With ``waiting`` (a count per node, counted
        down in place), a node is reached once that many of its edges have led to it;
        ``accept`` (node indices -> bool mask): which reached nodes join (the others stop
        there)."""
        wave = np.flatnonzero(marked)
        while wave.size:
            if wave.size < NARROW:
                wave = self._walk(wave.tolist(), marked, waiting, accept)
                continue
            reached = self.at(wave)
            if waiting is None:
                reached = reached[~marked[reached]]
                reached = reached[~_repeats(reached, marked.size)]
            else:
                # (counted down in place, repeats and all: cheaper than sorting them out)
                np.subtract.at(waiting, reached, 1)
                reached = reached[(waiting[reached] == 0) & ~marked[reached]]
                reached = reached[~_repeats(reached, marked.size)]
            if accept is not None and reached.size:
                reached = reached[accept(reached)]
            marked[reached] = True
            wave = reached
        return marked

    def _walk(self, stack: list[int], marked: np.ndarray, waiting: np.ndarray | None,
              accept: Callable[[np.ndarray], np.ndarray] | None) -> np.ndarray:
        """``spread`` one node at a time from the nodes of ``stack``, until as many nodes
        as make a wave are waiting to be followed: they are returned as the next wave (an
        empty one when the walk ends). A narrow start can open onto a wide part (the step
        mask starts at a few init/save targets whose inputs are the thousands of
        initialisers): before, the walk went on node by node through all of it. Which
        nodes are marked does not depend on the order they are followed in."""
        starts, other = self.starts, self.other
        while stack:
            if len(stack) >= NARROW:
                return np.array(stack, dtype=np.int64)
            v = stack.pop()
            for w in other[starts[v]:starts[v + 1]].tolist():
                if waiting is not None:
                    waiting[w] -= 1
                    if waiting[w]:
                        continue
                if marked[w] or (accept is not None and not accept(np.array([w]))[0]):
                    continue
                marked[w] = True
                stack.append(w)
        return np.empty(0, dtype=np.int64)

    def closure(self, mask: np.ndarray) -> np.ndarray:
        """``mask`` (bool per node) and every node an edge chain leads to from it."""
        return self.spread(mask.copy())


def _repeats(nodes: np.ndarray, n: int) -> np.ndarray:
    """True at each occurrence of a node in ``nodes`` but its last (each kept once, without
    a sort)."""
    last = np.empty(n, dtype=np.int64)
    at = np.arange(nodes.size)
    last[nodes] = at
    return last[nodes] != at
