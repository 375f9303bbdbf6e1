"""The format-neutral model: a loaded model's graph plus what locates its nodes."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import Diagnostic
from .build import BuildResult, build_graph
from .graph import Edge, Graph, Node, SourceLocation
from ..loaders.steps import StepSpec, loader_phases
from .step import Resolver, Step, build_step

__all__ = ["Model", "Graph", "Node", "Edge", "SourceLocation", "model_from_raw", "build_graph"]


@dataclass
class Model:
    path: str                      #: as the user named it
    file: str                      #: the file holding the graph (for SARIF / GitHub)
    format: str
    entry: str
    graph: Graph
    diagnostics: list[Diagnostic] = field(default_factory=list)   #: from loading/building
    #: names in the model -> nodes of the expanded graph (tensors, call targets)
    resolver: Resolver | None = None
    steps: dict[str, StepSpec] = field(default_factory=dict)   #: named steps declared
    step_name: str | None = None       #: the declared step analysed
    loader: bool = False               #: analysed with a SavedModel loader's phases
    fetch: tuple[str, ...] = ()        #: --fetch
    feed: tuple[str, ...] = ()         #: --feed
    place_pruned_graph: bool = False

    def step_spec(self) -> StepSpec | None:
        """The step analysed: --fetch/--feed, else the named step, else None (whole graph)."""
        if self.fetch or self.feed:
            return StepSpec("the step of --fetch/--feed",
                            fetches=tuple(f for f in self.fetch if not _is_op(f, self)),
                            targets=tuple(f for f in self.fetch if _is_op(f, self)),
                            feeds=self.feed)
        if self.step_name is not None:
            return self.steps[self.step_name]
        return None

    def build_step(self) -> Step:
        """The analysed step with every node's phase (see ``model.step``)."""
        resolver = self.resolver or Resolver(self.graph)
        phases = loader_phases(self.steps) if self.loader else []
        return build_step(self.graph, resolver, self.step_spec(), phases,
                          place_pruned=self.place_pruned_graph)


def _is_op(name: str, model: "Model") -> bool:
    """A fetch written without ``:k`` names an operation, run as a target (as
    ``Session.run("name")`` reads it); ``name:k`` is a tensor handed back."""
    return ":" not in name or name.startswith("^")


def _names(items) -> tuple[str, ...]:
    """``["a,b", "c:1"]`` -> ``("a", "b", "c:1")`` (flags and config may list or join)."""
    return tuple(dict.fromkeys(x.strip() for item in items for x in item.split(",")
                               if x.strip()))


def model_from_raw(raw) -> Model:
    """Build the analysed ``Model`` from a ``loaders.RawModel``."""
    result: BuildResult = build_graph(raw.graph_def, name=str(raw.ref.path), library=raw.functions())
    graph = result.graph
    diags = list(result.diagnostics)
    diags.extend(raw.notes)
    opts = raw.options
    lines = raw.node_lines
    dbg = raw.debug_info
    if lines or dbg is not None:    # else (a binary graph without debug info): no pass
        for node in graph:
            if not node.function and node.name in lines:
                node.file_line = lines[node.name]
            if dbg is not None:
                original = node.name[len(node.call_site) + 1:] if node.function else node.name
                node.location = dbg.location(original, node.function)
    model = Model(path=str(raw.ref.path), file=str(raw.file), format=raw.format,
                  entry=raw.entry, graph=graph, diagnostics=diags,
                  resolver=Resolver(graph, result.alias, result.control_alias),
                  steps=dict(raw.steps), step_name=raw.step, loader=raw.loader)
    if opts is not None:
        model.fetch = _names(opts.fetch)
        model.feed = _names(opts.feed)
        model.place_pruned_graph = opts.place_pruned_graph
    return model
