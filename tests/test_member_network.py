"""The widths and the critical path on the network between the members
(``member_network.py``) equal those on the whole DAG: same widths, same antichains, same
heaviest path; and the wave passes of ``waves.py`` give what a node-by-node walk gives."""

from __future__ import annotations

import numpy as np
import pytest

from placelint.analyses.antichain import solve_antichain
from placelint.analyses.dag import IndexedDag, topological_order
from placelint.analyses.member_network import Between, MemberNetwork
from placelint.analyses.threads import ThreadModel
from placelint.analyses import waves
from placelint.analyses.waves import Grouped


def random_dag(seed: int) -> tuple[IndexedDag, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 200)) if seed % 10 else seed % 3     # a few with 0, 1, 2 nodes
    a = rng.integers(0, max(n, 1), size=int(rng.integers(0, 3 * n + 1)) if n > 1 else 0)
    b = rng.integers(0, max(n, 1), size=a.size)
    keep = a != b
    perm = rng.permutation(n)          # node ids not in topological order
    src, dst = perm[np.minimum(a, b)[keep]], perm[np.maximum(a, b)[keep]]
    by = np.argsort(dst, kind="stable")
    src, dst = src[by].astype(np.int64), dst[by].astype(np.int64)
    order = topological_order(n, src, dst)
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    control = rng.random(src.size) < 0.3
    members = rng.random(n) < rng.uniform(0.05, 0.6)
    return IndexedDag([None] * n, {}, order, position, src, dst, control), members


def ancestors(dag: IndexedDag, mask: np.ndarray) -> np.ndarray:
    out = mask.copy()
    for v in dag.order[::-1].tolist():
        if out[v]:
            out[dag.src[dag.dst == v]] = True
    return out


@pytest.mark.parametrize("seed", range(60))
def test_member_network_widths_antichains_and_paths_equal_the_whole_dags(seed):
    dag, members = random_dag(seed)
    n = dag.n
    net = MemberNetwork(Between(dag), members, dag.control)
    whole = solve_antichain(n, *dag.unique_edges, members, unique=True, position=dag.position)
    here = net.solve(members)
    assert here.width == whole.width
    assert here.antichain().nodes.tolist() == whole.antichain().nodes.tolist()
    # a subset of the members, weighted
    rng = np.random.default_rng(seed)
    part = members & (rng.random(n) < 0.5)
    weights = rng.integers(1, 5, size=n)
    whole = solve_antichain(n, *dag.unique_edges, part, weights, unique=True, position=dag.position)
    here = net.solve(part, weights)
    assert here.width == whole.width
    assert here.antichain().nodes.tolist() == whole.antichain().nodes.tolist()
    # without the dropped edges
    keep = ~dag.control
    assert (net.solve_without_dropped(members).width
            == solve_antichain(n, dag.src[keep], dag.dst[keep], members, position=dag.position).width)
    # the heaviest path, weights on members only (some 0, or all of them): the same path
    paths = net.paths()
    for high in (9, 3, 1):
        weight = np.where(members, rng.integers(0, high, size=n), 0).astype(float)
        args = (weight, np.ones(n, dtype=np.int64), np.zeros(n, dtype=bool), 1)
        whole = ThreadModel(dag, *args, dispatched=members).critical_path()
        here = ThreadModel(dag, *args, dispatched=members, paths=paths).critical_path()
        assert here == whole


@pytest.mark.parametrize("narrow", [1, 10**9], ids=["waves", "node-by-node"])
@pytest.mark.parametrize("seed", range(30))
def test_spread_equals_a_walk(seed, narrow, monkeypatch):
    # both ways ``spread`` goes on: waves of numpy calls, and one node at a time (waves
    # narrower than NARROW)
    monkeypatch.setattr(waves, "NARROW", narrow)
    dag, members = random_dag(seed)
    pred = Grouped(dag.n, dag.dst, dag.src)
    assert pred.closure(members).tolist() == ancestors(dag, members).tolist()
    # count down each node's out edges from the members backwards: a node joins once all
    # its out edges lead into the set (the step mask's rule)
    left = pred.spread(members.copy(), np.bincount(dag.src, minlength=dag.n))
    expect = members.copy()
    for v in dag.order[::-1].tolist():
        outs = dag.dst[dag.src == v]
        if outs.size and expect[outs].all():
            expect[v] = True
    assert left.tolist() == expect.tolist()
    # with a filter on who joins: odd nodes only (they stop the walk through them)
    left = pred.spread(members.copy(), np.bincount(dag.src, minlength=dag.n),
                       accept=lambda nodes: nodes % 2 == 1)
    expect = members.copy()
    for v in dag.order[::-1].tolist():
        outs = dag.dst[dag.src == v]
        if v % 2 == 1 and outs.size and expect[outs].all():
            expect[v] = True
    assert left.tolist() == expect.tolist()


def test_a_long_chain_goes_node_by_node(monkeypatch):
    # 10^4 nodes in a chain, counted down from its end: every node joins, one per wave, and
    # no wave that narrow takes a round of numpy calls (10^5 of them took 1.8 s)
    n = 10_000
    pred = Grouped(n, np.arange(1, n), np.arange(n - 1))    # node i+1's predecessor: i
    rounds = []
    at = Grouped.at
    monkeypatch.setattr(Grouped, "at", lambda self, wave: rounds.append(wave.size) or at(self, wave))
    marked = np.zeros(n, dtype=bool)
    marked[-1] = True
    assert pred.spread(marked, np.bincount(np.arange(n - 1), minlength=n)).all()
    assert rounds == []
    # a wide start takes numpy rounds while the waves are wide
    wide = Grouped(n, np.repeat(np.arange(1, n), 1), np.zeros(n - 1, dtype=np.int64))
    marked = np.zeros(n, dtype=bool)
    marked[1:] = True
    assert wide.closure(marked).all()
    assert rounds == [n - 1]


def test_a_narrow_start_onto_a_wide_part_goes_back_to_waves(monkeypatch):
    # the step mask's shape: one target whose inputs are 10^4 initialisers, each with an
    # input of its own; counted down from the target, node by node only until the
    # initialisers make a wave (before: all 2*10^4 nodes one at a time)
    k = 10_000
    n = 2 * k + 1           # 0: the target; 1..k: its inputs; k+1..2k: theirs
    src = np.concatenate([np.arange(1, k + 1), np.arange(k + 1, n)])
    dst = np.concatenate([np.zeros(k, dtype=np.int64), np.arange(1, k + 1)])
    pred = Grouped(n, dst, src)
    rounds = []
    at = Grouped.at
    monkeypatch.setattr(Grouped, "at", lambda self, wave: rounds.append(wave.size) or at(self, wave))
    marked = np.zeros(n, dtype=bool)
    marked[0] = True
    assert pred.spread(marked, np.bincount(src, minlength=n)).all()
    assert rounds == [k, k]     # the initialisers, then their inputs
