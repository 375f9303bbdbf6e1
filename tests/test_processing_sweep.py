"""``processing_order.sweep_order`` (the processing order over the edge arrays) against
``kahn_order`` (node by node), on random graphs of every shape it must handle or refuse."""

from __future__ import annotations

import numpy as np
import pytest

from placelint.analyses import processing_order
from placelint.analyses.processing_order import _MAX_RAISES, kahn_order, sweep_order


def _kahn(n, src, dst):
    return kahn_order(n, src, dst, np.bincount(dst, minlength=n)).tolist()


def _random_dag(rng, n, m, backward):
    """Edges of a random DAG over a random topological order; ``backward``: the share of
    nodes placed out of order in the graph (which makes edges point backwards)."""
    rank = np.arange(n)
    moved = rng.random(n) < backward
    rank[moved] = rng.permutation(rank[moved])      # a few nodes listed out of order
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = a != b
    a, b = a[keep], b[keep]
    # an edge from the earlier in a hidden topological order (a random one) to the later
    topo = rng.permutation(n) if backward >= 1 else rank
    forward = topo[a] < topo[b]
    src, dst = np.where(forward, a, b), np.where(forward, b, a)
    by = np.argsort(dst, kind="stable")             # in-edges node by node, as graph_edges
    return src[by].astype(np.int64), dst[by].astype(np.int64)


@pytest.mark.parametrize("seed", range(40))
def test_sweep_order_is_kahns_order_on_random_dags(seed, monkeypatch) -> None:
    # (with any number of raising rounds: a DAG is never refused then)
    monkeypatch.setattr(processing_order, "_MAX_RAISES", 10**6)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    m = int(rng.integers(0, 4 * n))
    src, dst = _random_dag(rng, n, m, backward=[0.02, 0.1, 0.5, 1.0][seed % 4])
    assert sweep_order(n, src, dst).tolist() == _kahn(n, src, dst)


def test_sweep_order_takes_late_nodes_in_their_steps_cascade_smallest_first() -> None:
    # 0 <- 3 (backward), 1 <- 0, 2 free, 3 free: Kahn takes 2, 3, then 0 and 1 behind it
    src = np.array([3, 0, 4, 1], dtype=np.int64)
    dst = np.array([0, 1, 1, 2], dtype=np.int64)
    assert sweep_order(5, src, dst).tolist() == _kahn(5, src, dst) == [3, 0, 4, 1, 2]


def test_sweep_order_refuses_a_cycle_an_outside_edge_and_long_late_chains() -> None:
    for src, dst in (([2, 0], [0, 2]), ([1], [1]), ([-1, 0], [1, 2]), ([0, 2, 1], [1, 1, 2])):
        # a cycle 0 <-> 2, a self-loop, an edge from outside, a cycle 1 <-> 2 below 0
        assert sweep_order(3, np.array(src), np.array(dst)) is None
    # a chain listed backwards: every round raises one more node
    n = _MAX_RAISES + 5
    src, dst = np.arange(1, n, dtype=np.int64), np.arange(0, n - 1, dtype=np.int64)
    assert sweep_order(n, src, dst) is None
    assert _kahn(n, src, dst) == list(range(n - 1, -1, -1))


def test_sweep_order_keeps_graph_order_without_backward_edges() -> None:
    src, dst = np.array([0, 0, 1], dtype=np.int64), np.array([1, 2, 2], dtype=np.int64)
    assert sweep_order(3, src, dst).tolist() == [0, 1, 2]
    assert sweep_order(0, src[:0], dst[:0]).tolist() == []


@pytest.mark.parametrize("seed", range(40))
def test_sweep_order_on_any_random_graph_is_kahns_or_refused(seed) -> None:
    # edges in any direction, so cycles too (mostly short ones, over a few nodes)
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(2, 200))
    src, dst = _random_dag(rng, n, int(rng.integers(0, 2 * n)), backward=0.05)
    k = int(rng.integers(0, 3))
    extra = rng.integers(0, n, (2, k))
    src, dst = np.concatenate((src, extra[0])), np.concatenate((dst, extra[1]))
    by = np.argsort(dst, kind="stable")
    src, dst = src[by], dst[by]
    fast = sweep_order(n, src, dst)
    if fast is not None:
        assert fast.tolist() == _kahn(n, src, dst)
    else:
        assert len(set(_kahn(n, src, dst))) == n
