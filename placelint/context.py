"""Per-model analysis context: the model, the target, and each analysis computed once.

Rules read analyses from here (``ctx.step``, ``ctx.placement``, ``ctx.shapes``,
``ctx.transfers``, ``ctx.parallelism``); each is computed on first use and shared by every rule, so
``check`` does each analysis at most once per model.
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import cached_property
from itertools import islice

from .model import Model
from .settings import Settings


#: phases that run once, when a SavedModel is loaded: never a per-step cost
LOAD_PHASES = ("restore", "init")


class Context:
    def __init__(self, model: Model, settings: Settings):
        self.model = model
        self.graph = model.graph
        self.settings = settings
        self.devices = settings.devices
        self.allow_soft_placement = settings.allow_soft_placement
        #: ``on_phase(name)`` hears each analysis as it starts and "rules" when it ends
        #: (a progress display; ``pipeline.analyze`` sets it)
        self.on_phase = None
        self._phases: list[str] = []

    @contextmanager
    def _phase(self, name: str):
        if self.on_phase is None:
            yield
            return
        self._phases.append(name)
        self.on_phase(name)
        try:
            yield
        finally:
            self._phases.pop()
            self.on_phase(self._phases[-1] if self._phases else "rules")

    @cached_property
    def step(self):
        """``model.step.Step``: the step analysed (``Session.run``'s pruned graph, or the
        whole graph) and the phase of every node."""
        step = self.model.build_step()
        if step.feeds:
            # fed tensors come from the client's device: this host's CPU:0
            client = self.client_device     # (``step.subgraph`` puts its _Args first)
            for name, node in islice(step.graph.nodes.items(), len(step.feeds)):
                if node.op == "_Arg" and name not in self.graph.nodes:
                    node.device, node.spec = str(client.name), client.spec
        return step

    @cached_property
    def client_device(self):
        """DirectSession's client device (``device_set_->client_device()``): ``CPU:0`` of
        the task the session runs on (in a cluster, ``DeviceSet.session_task``)."""
        cpus = [d for d in self.devices.devices if d.type == "CPU"] or list(self.devices.devices)
        task = self.devices.session_task
        local = [d for d in cpus if task is not None and d.spec.address_space() == task]
        return min(local or cpus, key=lambda d: (d.spec.id or 0, str(d.name)))

    @cached_property
    def placement(self):
        """``analyses.placer.PlacementResult``: TF's Placer, predicted, on the whole graph as
        DirectSession places it (on the step's graph alone under ``--place-pruned-graph``)."""
        from .analyses.placer import place
        with self._phase("placement"):
            return place(self.placement_graph, self.devices,
                         allow_soft_placement=self.allow_soft_placement)

    @property
    def placement_graph(self):
        """The graph ``placement`` covers: the whole graph, or the step's under
        ``--place-pruned-graph``."""
        step = self.step
        return step.graph if step.place_pruned and not step.whole else self.graph

    @cached_property
    def step_placement(self):
        """The placement as the step sees it: the devices of its nodes, and the client's
        device for the ``_Arg`` nodes that stand for fed tensors."""
        step = self.step
        if step.whole or step.place_pruned or not step.feeds:
            return self.placement
        from .analyses.placer import PlacementResult
        p = self.placement
        client = self.client_device.name
        # (``step.subgraph`` puts the fed tensors' _Args first)
        args = {n: client for n, node in islice(step.graph.nodes.items(), len(step.feeds))
                if node.op == "_Arg" and n not in p.device}
        with_step = getattr(p.device, "with_step", None)
        device = with_step(args, step) if with_step is not None else {**p.device, **args}
        return PlacementResult(p.devices, p.allow_soft_placement, device,
                               p.errors, p.events, p.unknown_ops, p.group_of)

    @cached_property
    def soft_placement(self):
        """The placement TF's soft placement would make (the advice of PL101/PL104 asks
        whether it rescues a refused graph); ``placement`` itself when soft placement is on."""
        if self.allow_soft_placement:
            return self.placement
        from .analyses.placer import place
        return place(self.graph, self.devices, allow_soft_placement=True, like=self.placement)

    @cached_property
    def node_order(self) -> dict[str, int]:
        """Each node's position in TF's processing order (the order its placer visits
        nodes): grouped findings list their nodes in it, the node TF stops at first first."""
        from .analyses.placer import ordered
        return ordered(self.graph)[1]

    @cached_property
    def foreign_resources(self):
        """``list[analyses.xla_calls.ForeignResource]``: the resources an XLA-compiled
        call of the step reads from another device, which fails the step (PL109; PL201 and
        PL202 leave the copies of those handles to it)."""
        from .analyses.xla_calls import foreign_resources
        return foreign_resources(self.step.graph, self.step_placement.device)

    def copies_for_foreign_resources(self) -> set[tuple[str, int, str]]:
        """``(tensor's node, output, consumer)`` of each ``foreign_resources`` input: what
        the step would copy to the compiled call if XLA did not refuse it first."""
        return {(f.src, f.src_slot, f.call) for f in self.foreign_resources}

    @cached_property
    def shapes(self):
        """``analyses.shape_inference.ShapeInfo``: static shapes propagated through ops."""
        from .analyses.shape_inference import infer_shapes
        with self._phase("shapes"):
            return infer_shapes(self.graph)

    @cached_property
    def transfers(self):
        """``list[analyses.transfers.Transfer]``: the _Send/_Recv pairs TF's partitioner adds."""
        from .analyses.transfers import find_transfers, step_transfers
        with self._phase("transfers"):
            step = self.step
            if step.whole:
                found = find_transfers(self.graph, self.placement, self.shapes)
                if step.phase_of:     # a SavedModel with load phases and no step: no per-step
                    phase = step.phase_of_node      # cost for checkpoint-time and init ops
                    found = [t for t in found if phase(t.src) not in LOAD_PHASES
                             and not all(phase(c) in LOAD_PHASES for c in t.consumers)]
                return found
            return step_transfers(step, self.step_placement, self.shapes)

    @cached_property
    def parallelism(self):
        """``analyses.parallelism.ParallelismReport``: inter-/intra-op parallelism."""
        from .analyses.parallelism import analyze_parallelism
        step = self.step
        # a whole SavedModel graph with load phases: the restore/init ops are not the step
        step_nodes = None
        if step.whole and step.phase_of:
            phase = step.phase_of_node
            step_nodes = {n for n in step.graph.nodes if phase(n) not in LOAD_PHASES}
        with self._phase("parallelism"):
            return analyze_parallelism(step.graph, shapes=self.shapes, placement=self.step_placement,
                                       cores=self.settings.cores, batch_size=self.settings.batch_size,
                                       step_nodes=step_nodes)

    @cached_property
    def memory(self):
        """``analyses.memory.MemoryReport``: resident bytes and the step's peak per device,
        over the analysed step (``ctx.step``)."""
        from .analyses.memory import analyze_memory
        step = self.step
        skip = None
        if step.whole and step.phase_of:    # a SavedModel's restore and init ops run once,
            phase = step.phase_of_node      # at load: no tensors of theirs in a step
            skip = lambda name: phase(name) in LOAD_PHASES  # noqa: E731
        with self._phase("memory"):
            return analyze_memory(step.graph, self.step_placement, self.shapes,
                                  batch_size=self.settings.batch_size, skip=skip,
                                  variables=None if step.whole else (self.graph, self.placement))
