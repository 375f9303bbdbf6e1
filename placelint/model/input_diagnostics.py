"""The build's PL005 findings on inputs TensorFlow's importer refuses: malformed input
names, inputs from missing nodes, and data inputs reading an output their source lacks
(one finding per destination node, listing a bounded number of names)."""

from __future__ import annotations

from typing import Iterable

from ..checks.pl005_invalid_graph import InvalidGraph
from ..diagnostics import Diagnostic
from ..humanize import list_names
from .graph import Edge, Graph


def input_diagnostics(graph: Graph, unreadable: dict[str, list[str]],
                      missing: dict[str, list[str]], bad_inputs: Iterable[list[Edge]]
                      ) -> list[Diagnostic]:
    """``unreadable``/``missing``: destination -> its inputs (as written) that cannot be
    parsed / that name no node; ``bad_inputs``: per destination, its data edges reading an
    output their source does not have."""
    diags = []
    for dst, texts in unreadable.items():
        diags.append(InvalidGraph.diag(
            f"node '{dst}' has malformed input name(s) {_quoted(texts)} "
            "(an input is 'node', 'node:k' or '^node'; TensorFlow: "
            f"\"Node '{dst}': Unknown input node '{texts[0]}'\")",
            node=dst))
    for dst, texts in missing.items():
        diags.append(InvalidGraph.diag(f"node '{dst}' has input(s) from missing node(s) "
                                       f"{_quoted(texts)} (TensorFlow: \"Node '{dst}': Unknown "
                                       f"input node '{texts[0]}'\")", node=dst))
    for bad in bad_inputs:
        diags.append(_bad_inputs_diag(graph, bad))
    return diags


def _bad_inputs_diag(graph: Graph, bad: list[Edge]) -> Diagnostic:
    """PL005 for a node's data edges that read an output their source does not have."""
    e, src = bad[0], graph.nodes[bad[0].src]
    n_out = len(src.output_dtypes or ())
    more = (f"; also {list_names([x.tensor for x in bad[1:]], limit=5)}"
            if len(bad) > 1 else "")
    return InvalidGraph.diag(f"node '{e.dst}' reads output {e.src_slot} of '{e.src}' "
                             f"({src.op}), which has only {n_out} output(s){more} "
                             f"(TensorFlow: \"Node '{e.dst}': Connecting to invalid "
                             f"output {e.src_slot} of source node {e.src} which has "
                             f"{n_out} outputs\")", node=e.dst,
                             related=sorted({x.src for x in bad})[:10])


def _quoted(texts: list[str], limit: int = 5) -> str:
    return list_names([f"'{t}'" for t in texts], limit=limit)
