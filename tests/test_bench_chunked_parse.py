"""benchmarks/chunked_parse.py: the nodes' offsets it computes from the skeleton parse cut
a binary GraphDef into chunks that parse to the same nodes as the whole file."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import chunked_parse  # noqa: E402

from placelint.proto import GraphDef  # noqa: E402


def test_chunks_parse_to_the_whole_files_nodes(tmp_path: Path):
    gd = GraphDef()
    for i in range(300):        # names of 1, 2 and 3-byte lengths: every varint width used
        gd.node.add(name="n" * (i * 70 % 20000 + 1), op="NoOp")
    path = tmp_path / "g.pb"
    path.write_bytes(gd.SerializeToString())
    for chunk in (1, 7, 300, 1000):
        result = chunked_parse.child_chunked(path, chunk)
        assert result["nodes"] == 300
    whole = chunked_parse.child_whole(path)
    assert whole["nodes"] == 300
