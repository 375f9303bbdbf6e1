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


@pytest.mark.parametrize("seed", range(30))
def test_closure_and_count_down_equal_a_walk(seed):
    dag, members = random_dag(seed)
    pred = Grouped(dag.n, dag.dst, dag.src)
    assert pred.closure(members).tolist() == ancestors(dag, members).tolist()
    # count down each node's out edges from the members backwards: a node joins once all
    # its out edges lead into the set (the step mask's rule)
    left = members.copy()
    remaining = np.bincount(dag.src, minlength=dag.n)
    wave = np.flatnonzero(left)
    while wave.size:
        wave = pred.count_down(remaining, wave)
        wave = wave[~left[wave]]
        left[wave] = True
    expect = members.copy()
    for v in dag.order[::-1].tolist():
        outs = dag.dst[dag.src == v]
        if outs.size and expect[outs].all():
            expect[v] = True
    assert left.tolist() == expect.tolist()
