"""The format-neutral graph model every analysis works on.

One ``Graph`` per analysed model, whatever it was loaded from (GraphDef, MetaGraphDef,
SavedModel with its function library expanded). Nodes and edges are plain slotted
objects; ``Graph.nx`` is a ``networkx.DiGraph`` over node names whose node data holds
the ``Node`` (``g.nx.nodes[name]["node"]``) and whose edge data holds the list of
``Edge`` objects between the two nodes (``g.nx.edges[u, v]["edges"]``), so graph
algorithms and per-edge facts are both at hand. TF1 while loops are kept as they are:
``NextIteration -> Merge`` edges make cycles, and analyses that need a DAG call
``Graph.dag_edges`` / ``Graph.is_back_edge``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from ..location import SourceLocation
from .devices import DeviceSpec
from .ops import NEXT_ITERATION

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["Edge", "Graph", "Node", "SourceLocation"]


@dataclass(slots=True, eq=False)
class Edge:
    """A data or control edge. ``src_slot`` is -1 and ``dst_slot`` -1 for control edges.

    ``dtype`` is the DataType enum of the destination input where known (ref types as
    ``base + 100``); ``ref`` is true when that input is ref-typed or ``DT_RESOURCE``,
    which is what makes TF's Placer colocate the two ends.
    """

    src: str
    src_slot: int
    dst: str
    dst_slot: int
    dtype: int | None = None
    ref: bool = False

    @property
    def control(self) -> bool:
        return self.src_slot < 0

    @property
    def tensor(self) -> str:
        return f"^{self.src}" if self.control else f"{self.src}:{self.src_slot}"


@dataclass(slots=True, eq=False)
class Node:
    name: str
    op: str
    device: str = ""                      #: requested device, as written in the model
    spec: DeviceSpec | None = None        #: parsed requested device; None if malformed
    attrs: Mapping[str, Any] = field(default_factory=dict)  #: NodeDef.attr: name -> AttrValue
    in_edges: list[Edge] = field(default_factory=list)     #: data edges by slot, then control
    out_edges: list[Edge] = field(default_factory=list)
    output_dtypes: list[int] | None = None
    output_shapes: list[tuple[int, ...] | None] | None = None  #: -1 for unknown dims
    function: str = ""                    #: function body it was expanded from ('' = top level)
    call_site: str = ""                   #: name of the call node whose body this node is in
    loop: str = ""                        #: functional While node whose body holds this node
    location: SourceLocation | None = None  #: Python file:line that created the op
    file_line: int | None = None          #: line of the node in a text model file
    #: ``OpInfo.signature(attrs)``, set by the builder so that analyses asking the op
    #: database about this node skip recomputing it (attrs do not change after the build)
    op_signature: tuple | None = None
    #: placed with soft placement: the node is in the body of a function call whose
    #: ``config_proto`` attr sets ``allow_soft_placement`` (every call TF2 writes)
    soft: bool = False

    @property
    def data_inputs(self) -> list[Edge]:
        return [e for e in self.in_edges if not e.control]

    @property
    def control_inputs(self) -> list[Edge]:
        return [e for e in self.in_edges if e.control]

    @property
    def scope(self) -> str:
        return self.name.rpartition("/")[0]


class Graph:
    """A model's graph, after loading and function expansion."""

    def __init__(self, name: str = ""):
        self.name = name
        self.nodes: dict[str, Node] = {}
        self._nx: nx.DiGraph | None = None
        self._positions: dict[str, int] | None = None
        self._forward: bool | None = None
        self._no_class = False      # (see ``note_no_class_attrs``)
        #: nodes TensorFlow's importer refuses (PL007), node -> cause: placement rules do
        #: not report them again for the same cause
        self.invalid_nodes: dict[str, str] = {}
        self._derived: dict[str, Any] | None = None

    # -- construction ---------------------------------------------------------
    # Change the graph through these methods only: each drops what was derived from it.
    def add_node(self, node: Node) -> Node:
        self.nodes[node.name] = node
        self._nx = self._positions = self._forward = self._derived = None
        self._no_class = False
        return node

    def add_edge(self, edge: Edge, src: Node | None = None, dst: Node | None = None) -> Edge:
        """Add ``edge`` (``src``/``dst``: its end nodes, when the caller has them)."""
        (src or self.nodes[edge.src]).out_edges.append(edge)
        (dst or self.nodes[edge.dst]).in_edges.append(edge)
        self._nx = self._forward = self._derived = None
        return edge

    def remove_edge(self, edge: Edge) -> None:
        src, dst = self.nodes[edge.src], self.nodes[edge.dst]
        src.out_edges = [e for e in src.out_edges if e is not edge]
        dst.in_edges = [e for e in dst.in_edges if e is not edge]
        # (edges that pointed forward still do: _forward stays)
        self._nx = self._derived = None

    def changed(self) -> None:
        """Drop everything derived from the graph: for a builder that filled ``nodes`` and
        the nodes' edge lists directly (one call at the end rather than one per change)."""
        self._nx = self._positions = self._forward = self._derived = None
        self._no_class = False

    def derived(self, key: str, build: Callable[[], Any]) -> Any:
        """An index derived from the graph (e.g. the analyses' ``IndexedDag``): built by
        ``build`` on first use and kept until the graph changes."""
        if self._derived is None:
            self._derived = {}
        try:
            return self._derived[key]
        except KeyError:
            value = self._derived[key] = build()
            return value

    # -- access ---------------------------------------------------------------
    def __contains__(self, name: str) -> bool:
        return name in self.nodes

    def __getitem__(self, name: str) -> Node:
        return self.nodes[name]

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes.values())

    def __len__(self) -> int:
        return len(self.nodes)

    def positions(self) -> dict[str, int]:
        """Node name -> its position in graph order (built once until a node is added;
        shared by validation, placement and the analyses' indexing: do not modify)."""
        if self._positions is None:
            # (dict(zip(...)) inserts ~20% faster than a comprehension: 0.07 s at 10^6)
            self._positions = dict(zip(self.nodes, range(len(self.nodes))))
        return self._positions

    def edges_point_forward(self) -> bool:
        """Every edge goes from a node to a later one in graph order: then the graph has
        no cycle and graph order is a topological order. GraphDefs are usually written in
        creation order, and this one pass is much cheaper than a search. Cached until a node
        or an edge is added (removing edges cannot turn a True into a False)."""
        if self._forward is None:
            index = self.positions()
            self._forward = all(index[e.src] < i for i, node in enumerate(self.nodes.values())
                                for e in node.in_edges)
        return self._forward

    def note_edges_point_forward(self) -> None:
        """Record that every edge goes from a node to a later one, for a builder that
        knows it (it added each edge from an existing node to the node it had just added),
        which spares ``edges_point_forward`` its pass over the edges. Adding a node or an
        edge afterwards clears it, as it clears the computed answer."""
        self._forward = True

    def may_have_class_attrs(self) -> bool:
        """Some node may have a ``_class`` attr (colocation groups): True unless a builder
        noted that none has (``note_no_class_attrs``) and no node was added since."""
        return not self._no_class

    def note_no_class_attrs(self) -> None:
        """Record that no node has a ``_class`` attr, for a builder that saw every node's
        attrs (``model.attr_records``): the placer's ``_class`` pass then need not read
        every node's attrs to find none. Adding a node clears it."""
        self._no_class = True

    def edges(self) -> Iterator[Edge]:
        for node in self.nodes.values():
            yield from node.in_edges

    @property
    def nx(self) -> nx.DiGraph:
        """The graph as a ``networkx.DiGraph`` (built on first use, then cached)."""
        if self._nx is None:
            import networkx as nx   # ~0.15 s to import: only when an analysis asks for it

            g = nx.DiGraph()
            g.add_nodes_from((name, {"node": node}) for name, node in self.nodes.items())
            for node in self.nodes.values():
                for e in node.in_edges:
                    data = g.get_edge_data(e.src, e.dst)
                    if data is None:
                        g.add_edge(e.src, e.dst, edges=[e])
                    else:
                        data["edges"].append(e)
            self._nx = g
        return self._nx

    # -- loops ----------------------------------------------------------------
    def is_back_edge(self, edge: Edge) -> bool:
        """TF1 loop back edge: ``NextIteration -> Merge`` (what makes the cycle)."""
        return self.nodes[edge.src].op in NEXT_ITERATION

    def dag_edges(self) -> Iterator[Edge]:
        """Every edge except loop back edges: a DAG for well-formed graphs."""
        for e in self.edges():
            if not self.is_back_edge(e):
                yield e
