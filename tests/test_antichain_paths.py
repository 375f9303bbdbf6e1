"""The pure-Python max flow (``chain_cover.py``) and scipy's give the same antichain.

``antichain.py`` solves graphs of up to ``SMALL_NETWORK`` nodes + edges without scipy (so a
small or medium model never imports it). The vertices reachable from the source in the
residual network are the same for every maximum flow, so both paths must return the same
width *and* the same nodes, on any DAG, with or without weights.
"""

from __future__ import annotations

import numpy as np
import pytest

from placelint.analyses import antichain
from placelint.analyses.antichain import max_antichain


def random_dag(n: int, edges: int, seed: int):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n, size=edges)
    b = rng.integers(0, n, size=edges)
    keep = a != b
    src, dst = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
    perm = rng.permutation(n)          # node ids not in topological order
    return perm[src], perm[dst], rng.random(n) < rng.uniform(0.2, 1.0)


@pytest.mark.parametrize("seed", range(80))
def test_small_and_scipy_paths_agree(seed, monkeypatch):
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(2, 300))
    src, dst, members = random_dag(n, int(rng.integers(0, 4 * n)), seed)
    weights = rng.integers(1, 6, size=n) if seed % 2 else None
    monkeypatch.setattr(antichain, "SMALL_NETWORK", 10**9)
    monkeypatch.setattr(antichain, "SEARCH_BUDGET", 10**9)
    small = max_antichain(n, src, dst, members, weights)
    assert small.nodes.size and not isinstance(antichain.solve_antichain(
        n, src, dst, members, weights)._net, antichain._Network)     # (solved in Python)
    monkeypatch.setattr(antichain, "SMALL_NETWORK", 0)
    big = max_antichain(n, src, dst, members, weights)
    assert small.width == big.width
    assert small.nodes.tolist() == big.nodes.tolist()


def towers(k: int, layers: int, join: bool):
    """``k`` chains of ``layers`` members, each layer's outputs summed by one node that
    every chain's next layer reads (``join``): the greedy chain cover links every next layer
    to the same member and the searches finish it; without the joins the width is ``k``."""
    src, dst = [], []
    n = 0
    prev = [None] * k
    for _ in range(layers):
        ids = list(range(n, n + k))
        n += k
        for c, v in enumerate(ids):
            if prev[c] is not None:
                src.append(prev[c])
                dst.append(v)
        if join:
            mix = n
            n += 1
            src += ids
            dst += [mix] * k
            prev = [mix] * k
        else:
            prev = ids
    members = np.zeros(n, dtype=bool)
    members[[v for v in range(n) if not join or v % (k + 1) != k]] = True
    return n, np.array(src), np.array(dst), members


@pytest.mark.parametrize("join", [True, False])
def test_joined_towers_width(join, monkeypatch):
    n, src, dst, members = towers(4, 50, join)
    monkeypatch.setattr(antichain, "SMALL_NETWORK", 10**9)
    small = max_antichain(n, src, dst, members)
    assert small.width == 4
    monkeypatch.setattr(antichain, "SMALL_NETWORK", 0)
    assert max_antichain(n, src, dst, members).nodes.tolist() == small.nodes.tolist()


def test_a_flow_past_the_search_budget_goes_to_scipy(monkeypatch):
    """With no budget for searches, a greedy flow that is not maximum (the joined towers')
    is handed to scipy, with the same result."""
    n, src, dst, members = towers(4, 20, True)
    monkeypatch.setattr(antichain, "SEARCH_BUDGET", 0)
    solved = antichain.solve_antichain(n, src, dst, members)
    assert isinstance(solved._net, antichain._Network)
    assert solved.width == 4


def _imports_scipy(code: str) -> bool:
    """Whether running ``code`` (which asserts its own result) in a fresh interpreter
    imported scipy."""
    import subprocess
    import sys
    code = "import sys, numpy as np\n" + code + "print('scipy' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() in ("True", "False"), out.stdout
    return out.stdout.strip() == "True"


def test_small_graphs_do_not_import_scipy():
    assert not _imports_scipy(
        "from placelint.analyses.antichain import max_antichain\n"
        "r = max_antichain(4, np.array([0, 0]), np.array([1, 2]), np.ones(4, bool))\n"
        "assert r.width == 3, r\n")


def test_medium_graphs_do_not_import_scipy():
    """5 * 10^4 nodes in 500 parallel chains: width 500, solved without scipy."""
    assert not _imports_scipy(
        "from placelint.analyses.antichain import max_antichain\n"
        "n = 50000\n"
        "src = np.arange(n - 500); dst = src + 500\n"
        "r = max_antichain(n, src, dst, np.ones(n, bool))\n"
        "assert r.width == 500 and r.nodes.tolist() == list(range(n - 500, n)), r.width\n")


def chain_dag(n: int, seed: int, broken: bool):
    """A path through every node plus random forward edges (node ids shuffled); ``broken``
    drops one edge of the path, which may or may not leave the members a chain."""
    rng = np.random.default_rng(seed)
    path = np.arange(n - 1)
    if broken:
        path = np.delete(path, rng.integers(0, n - 1))
    a = rng.integers(0, n - 1, size=n)
    b = np.minimum(n - 1, a + rng.integers(1, 40, size=n))
    src, dst = np.concatenate([path, a]), np.concatenate([path + 1, b])
    perm = rng.permutation(n)
    position = np.empty(n, dtype=np.int64)
    position[perm] = np.arange(n)
    return n, perm[src], perm[dst], perm[rng.random(n) < 0.3], position


@pytest.mark.parametrize("seed", range(24))
def test_chain_check_matches_the_flow(seed, monkeypatch):
    """Members that form one chain are told apart without a flow (``position`` given); the
    width, and the antichain solved when asked for, are the flow's. Graphs of ~5000 nodes,
    so that the check reads its edges in several slices."""
    n, src, dst, member_idx, position = chain_dag(int(5000 + 37 * seed), seed, broken=seed % 3 == 0)
    members = np.zeros(n, dtype=bool)
    members[member_idx] = True
    weights = np.random.default_rng(seed).integers(1, 5, size=n) if seed % 4 == 1 else None
    monkeypatch.setattr(antichain, "SMALL_NETWORK", 0)
    flow = antichain.solve_antichain(n, src, dst, members, weights)
    fast = antichain.solve_antichain(n, src, dst, members, weights, position=position)
    assert fast.width == flow.width
    assert fast.antichain().nodes.tolist() == flow.antichain().nodes.tolist()
    if seed % 3:        # the whole path is there: one chain, the heaviest member its width
        assert fast.width == (1 if weights is None else int(weights[members].max()))


def test_a_serial_graph_needs_no_flow():
    """A chain of 10^4 members is solved without importing scipy (a serial model's width)."""
    assert not _imports_scipy(
        "from placelint.analyses.antichain import solve_antichain\n"
        "n = 10000\n"
        "src, dst = np.arange(n - 1), np.arange(1, n)\n"
        "r = solve_antichain(n, src, dst, np.ones(n, bool), position=np.arange(n))\n"
        "assert r.width == 1, r.width\n")


@pytest.mark.parametrize("seed", range(40))
def test_taking_out_non_members_keeps_the_flow_and_the_antichain(seed, monkeypatch):
    """``chain_cover._contract`` takes out non-members with no edge in or out, one edge in
    or one edge out (chains of them too) before the flow: the same width and the same
    reached members as on the whole network, with or without weights."""
    from placelint.analyses import chain_cover
    from placelint.analyses.dag import topological_order

    rng = np.random.default_rng(2000 + seed)
    n = int(rng.integers(3, 200))
    src, dst, members = random_dag(n, int(rng.integers(n // 2, 3 * n)), seed)
    members &= rng.random(n) < 0.3          # few members: most nodes can go
    if members.sum() < 2:
        members[:2] = True
    src, dst = src.astype(np.int64), dst.astype(np.int64)
    member_idx = np.flatnonzero(members)
    weights = rng.integers(1, 4, size=member_idx.size) if seed % 2 else None
    order = topological_order(n, src, dst)
    small = chain_cover._contract(n, src, dst, member_idx, order)
    assert small[0] <= n and small[3].size == member_idx.size
    fast = chain_cover.greedy_max_flow(n, src, dst, member_idx, weights, order, 10**9)
    monkeypatch.setattr(chain_cover, "_contract", lambda *a: a)
    whole = chain_cover.greedy_max_flow(n, src, dst, member_idx, weights, order, 10**9)
    assert fast[0] == whole[0]
    assert [r.tolist() for r in fast[1]()] == [r.tolist() for r in whole[1]()]


def test_contract_takes_out_each_kind_of_non_member():
    """Members 0, 1, 2; non-members 3 (one edge in, one out), 4 (one in, two out), 5 (no
    edge in), 6 (two in, one out), 7 (two in, two out: stays) and 8 (one in, from 7, whose
    edges then leave from 7): the edges of those that go are rerouted, duplicates kept."""
    from placelint.analyses import chain_cover

    edges = [(0, 3), (3, 1), (0, 4), (4, 1), (4, 2), (5, 1), (0, 6), (2, 6), (6, 1),
             (0, 7), (2, 7), (7, 1), (7, 8), (8, 1), (8, 1)]
    src = np.array([u for u, _ in edges], dtype=np.int64)
    dst = np.array([v for _, v in edges], dtype=np.int64)
    n = 9
    order = np.array([0, 2, 5, 3, 4, 6, 7, 8, 1], dtype=np.int64)
    k, s, d, m, o = chain_cover._contract(n, src, dst, np.array([0, 1, 2]), order)
    # 8 (one edge in, from 7) goes; 7 stays with its two edges in and out; 3, 4, 5, 6 go
    assert k == 4 and m.tolist() == [0, 1, 2] and o.tolist() == [0, 2, 3, 1]
    assert sorted(zip(s.tolist(), d.tolist())) == sorted(
        [(0, 1), (0, 1), (0, 2), (0, 1), (2, 1), (0, 3), (2, 3), (3, 1), (3, 1), (3, 1)])
