"""The heaviest path of ``dag.longest_path``, its pass over the edges taken in slices."""

from __future__ import annotations

import numpy as np
import pytest

from placelint.analyses import dag as dag_mod
from placelint.analyses.dag import IndexedDag, longest_path, longest_path_and_span


def _random_dag(seed: int, n: int, m: int) -> IndexedDag:
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = a != b
    src, dst = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
    perm = rng.permutation(n)             # node ids not in topological order: node i
    order = perm                          # becomes perm[i], so perm is a topological order
    src, dst = perm[src], perm[dst]
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    return IndexedDag([None] * n, {}, order.astype(np.int64), position, src.astype(np.int64),
                      dst.astype(np.int64), np.zeros(src.size, dtype=bool))


def _reference(d: IndexedDag, weight: np.ndarray) -> tuple[float, np.ndarray]:
    best = weight.astype(float).copy()
    for v in d.order:
        preds = d.src[d.dst == v]
        if preds.size:
            best[v] = weight[v] + best[preds].max()
    return float(best.max()), best


@pytest.mark.parametrize("slice_size", [1, 3, 64, 1 << 16])
@pytest.mark.parametrize("seed", range(5))
def test_longest_path_is_the_heaviest_path_whatever_the_slice(monkeypatch, seed, slice_size):
    monkeypatch.setattr(dag_mod, "_SLICE", slice_size)
    d = _random_dag(seed, 200, 700)
    rng = np.random.default_rng(100 + seed)
    weight, other = rng.uniform(1, 10, d.n), rng.uniform(1, 10, d.n)
    span, path = longest_path(d, weight)
    expected, _ = _reference(d, weight)
    assert span == pytest.approx(expected)
    # the path is a path of the DAG and weighs its span
    edges = set(zip(d.src.tolist(), d.dst.tolist()))
    assert all((u, v) in edges for u, v in zip(path, path[1:]))
    assert float(weight[path].sum()) == pytest.approx(span)
    span2, path2, other_span = longest_path_and_span(d, weight, other)
    assert (span2, path2) == (span, path)
    assert other_span == pytest.approx(_reference(d, other)[0])


def test_nodes_without_edges_after_the_last_edge(monkeypatch):
    monkeypatch.setattr(dag_mod, "_SLICE", 1)
    # 0 -> 1, then isolated heavier nodes 2 and 3 later in topological order
    d = IndexedDag([None] * 4, {}, np.arange(4), np.arange(4), np.array([0]), np.array([1]),
                   np.zeros(1, dtype=bool))
    assert longest_path(d, np.array([1.0, 2.0, 2.5, 0.5])) == (3.0, [0, 1])
    assert longest_path(d, np.array([1.0, 1.0, 2.5, 0.5])) == (2.5, [2])
