"""The pure-Python max flow for small networks and scipy's give the same antichain.

``antichain.py`` solves networks of up to ``SMALL_NETWORK`` vertices without scipy (so a
small model never imports it). The vertices reachable from the source in the residual
network are the same for every maximum flow, so both paths must return the same width
*and* the same nodes, on any DAG.
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


@pytest.mark.parametrize("seed", range(40))
def test_small_and_scipy_paths_agree(seed, monkeypatch):
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(2, 300))
    src, dst, members = random_dag(n, int(rng.integers(0, 4 * n)), seed)
    monkeypatch.setattr(antichain, "SMALL_NETWORK", 10**9)
    small = max_antichain(n, src, dst, members)
    monkeypatch.setattr(antichain, "SMALL_NETWORK", 0)
    big = max_antichain(n, src, dst, members)
    assert small.width == big.width
    assert small.nodes.tolist() == big.nodes.tolist()


def test_small_graphs_do_not_import_scipy():
    import subprocess
    import sys
    code = ("import sys, numpy as np\n"
            "from placelint.analyses.antichain import max_antichain\n"
            "r = max_antichain(4, np.array([0, 0]), np.array([1, 2]), np.ones(4, bool))\n"
            "assert r.width == 3, r\n"
            "print('scipy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
