"""load -> model -> analyses -> diagnostics, for one model at a time.

One bad model never hides the others: every failure becomes a diagnostic of its model.
"""

from __future__ import annotations

import gc
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .checks import all_rules
from .checks.pl009_internal_error import InternalError
from .context import Context
from .diagnostics import Diagnostic, list_names
from .loaders import LoadError, ModelRef, load_raw
from .loaders.chunked import CorruptChunk
from .proto_lite import LiteRefused
from .model import Graph, Model, model_from_raw
from .settings import Settings

if TYPE_CHECKING:
    import networkx as nx

    from .analyses.parallelism import ParallelismReport
    from .analyses.shape_inference import ShapeInfo
    from .analyses.transfers import Transfer


@dataclass
class Report:
    """One model analysed: its findings (sorted), and when it loaded (``model`` is not
    None) the analyses behind them, each computed on first use (``placelint.analyze``
    returns one)."""

    ref: ModelRef
    model: Model | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    context: Context | None = None
    #: why the file is no model at all (a label map, a tf.train.Example...), else None;
    #: the commands skip such a file with a note unless the user named it
    not_a_model: str | None = None

    @property
    def findings(self) -> list[Diagnostic]:
        return self.diagnostics

    @property
    def graph(self) -> Graph | None:
        """The analysed graph (function bodies expanded), None when loading failed."""
        return None if self.model is None else self.model.graph

    @property
    def placement(self) -> dict[str, str | None]:
        """Node -> the full device name TF's placer would give it (None: unplaced)."""
        return {} if self.context is None else self.context.placement.device

    @property
    def transfers(self) -> list[Transfer]:
        """The _Send/_Recv pairs TF's partitioner would add, one per tensor and device."""
        return [] if self.context is None else self.context.transfers

    @property
    def parallelism(self) -> ParallelismReport | None:
        return None if self.context is None else self.context.parallelism

    @property
    def shapes(self) -> ShapeInfo | None:
        return None if self.context is None else self.context.shapes

    def to_networkx(self) -> nx.MultiDiGraph:
        """The analysed graph as a ``networkx.MultiDiGraph`` (see ``report_graph``)."""
        from .report_graph import to_networkx
        return to_networkx(self)

    @property
    def path(self) -> str:
        return self.ref.display

    @property
    def entry(self) -> str | None:
        """Which graph was analysed: the step and how it was chosen, or the whole graph
        (``Model.entry``, set from the step once the rules ran)."""
        return None if self.model is None else self.model.entry


def describe_analysed(model: Model, step) -> str:
    """``whole graph``, ``signature 'x' (12 nodes: fetch ...)``, plus the load phases."""
    text = step.describe()
    if step.whole and model.loader:
        loads = [k for k in ("restore", "init") if k in model.steps]
        text = (f"whole graph, with the load phases it declares ({', '.join(loads)}); no "
                "signature to serve" if loads else "whole graph (no signature or step declared)")
    elif model.loader and step.phase == "step":
        loads = [k for k in ("restore", "init") if k in model.steps]
        if loads:
            text += f", after the loader's {' and '.join(loads)} phase{'s' * (len(loads) > 1)}"
    elif model.loader:
        text += f", run once when the model is loaded ({step.phase} phase)"
    elif step.whole and model.entry and model.entry != "whole graph":
        text = model.entry
    if step.place_pruned and not step.whole:
        text += ", placed alone (--place-pruned-graph)"
    return text


def internal_error(where: str, exc: BaseException) -> Diagnostic:
    frames = traceback.extract_tb(exc.__traceback__)
    last = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    return InternalError.diag(f"internal error in {where}: {type(exc).__name__}: {exc}{last} "
                              "(this is a placelint bug; the other rules still ran)")


class NotAModel(Exception):
    """``load_model``'s signal that the file is another kind of protobuf file."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


#: ``Report``'s name before it was public.
ModelReport = Report


def load_model(ref: ModelRef, settings: Settings, *,
               raise_not_a_model: bool = False) -> tuple[Model | None, list[Diagnostic]]:
    """The model and the loader's diagnostics. ``raise_not_a_model``: raise ``NotAModel``
    (holding its PL001) for a file that is no model at all, rather than return it."""
    for lite in (True, False):
        try:
            raw = load_raw(ref, settings.load, lite=lite, chunked=lite)
        except LoadError as exc:
            diag = exc.diagnostic()
            if exc.not_a_model and raise_not_a_model:
                raise NotAModel(diag) from None
            return None, [diag]
        except (RecursionError, MemoryError, Exception) as exc:  # noqa: BLE001 - never a traceback
            return None, [internal_error("loading", exc)]
        try:
            model = model_from_raw(raw)
        except (LiteRefused, CorruptChunk) as exc:
            # attrs protobuf refuses, in a binary model read with them as wire bytes, or a
            # GraphDef's nodes a chunk's parse refuses as the build reads them: read it
            # again as protobuf reads it, whole, whose refusal PL001 quotes (the message
            # type and the error of the whole file's parse, not of a chunk's)
            if lite:
                del raw
                continue
            return None, [internal_error("building the graph", exc)]   # (not reached)
        except (RecursionError, Exception) as exc:  # noqa: BLE001
            return None, [internal_error("building the graph", exc)]
        return model, list(model.diagnostics)
    # (not reached: the second reading, with the real classes, returns)
    return None, [internal_error("building the graph", LiteRefused("read without wire attrs"))]


@contextmanager
def gc_paused():
    """Python's cyclic garbage collector off for the duration (nestable).

    Analysing a model allocates millions of objects that live until the report is done
    (nodes, edges, per-node facts) and almost no reference cycles (under a thousand for
    10^5 nodes). With the collector on, its repeated scans of those young objects took a
    fifth of the time of a 10^5-node check (6.7 s -> 5.3 s); reference counting still
    frees everything else, and the few cycles go at the next collection after this.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def analyze(ref: ModelRef, settings: Settings, on_phase=None) -> Report:
    """Load the model ``ref`` names and run every enabled rule over it.

    ``on_phase(name)``, when given, hears each phase as it starts: "loading", then "rules"
    and, inside the rules, each analysis computed ("placement", "shapes", "transfers",
    "parallelism"; ``Context``), for a progress display. A file that is no model at all
    gives a report with its PL001 and ``not_a_model`` set."""
    with gc_paused():
        if on_phase is not None:
            on_phase("loading")
        not_a_model = None
        try:
            model, diags = load_model(ref, settings, raise_not_a_model=True)
        except NotAModel as exc:
            model, diags, not_a_model = None, [exc.diagnostic], exc.diagnostic.message
        report = analyze_model(ref, model, diags, settings, on_phase=on_phase)
        report.not_a_model = not_a_model
        return report


def analyze_model(ref: ModelRef, model: Model | None, diags: list[Diagnostic],
                  settings: Settings, on_phase=None) -> Report:
    """The report of a loaded (or unloadable: None) model, ``diags`` from its loading."""
    with gc_paused():
        report = Report(ref, model)
        if model is not None:
            ctx = Context(model, settings)
            report.context = ctx
            if on_phase is not None:
                ctx.on_phase = on_phase
                on_phase("rules")
            diags.extend(run_rules(ctx, settings))
            try:
                model.entry = describe_analysed(model, ctx.step)
            except (RecursionError, Exception):  # noqa: BLE001 - reported by run_rules
                pass
        report.diagnostics = finalize(diags, ref, model, settings)
    return report


def run_rules(ctx: Context, settings: Settings) -> list[Diagnostic]:
    """Every enabled analysis rule over one model; a failing rule becomes PL009."""
    diags: list[Diagnostic] = []
    try:
        step = ctx.step
    except (RecursionError, Exception) as exc:  # noqa: BLE001
        return [internal_error("building the analysed step", exc)]
    if step.missing:
        from .checks.pl006_entry_not_found import EntryNotFound
        diags.append(EntryNotFound.diag(
            "the step names what the graph does not have: " + list_names(step.missing)
            + f" (TensorFlow: \"Tensor {step.missing[0]}, specified in either feed_devices or "
            "fetch_devices was not found in the Graph\")"))
    for rule in all_rules():
        if rule.origin != "analysis" or not settings.rule_enabled(rule.code, rule.name):
            continue
        try:
            found = list(rule().check(ctx))
        except (RecursionError, Exception) as exc:  # noqa: BLE001
            diags.append(internal_error(f"rule {rule.code} {rule.name}", exc))
            continue
        for d in found:
            if d.phase is None:
                d.phase = step.phase if rule.per_step else step.phase_of_node(d.node)
        diags.extend(found)
    return diags


def group_loader_findings(diags: list[Diagnostic]) -> list[Diagnostic]:
    """Loader findings (the loader rules but internal errors) that say the same thing about
    different nodes become one finding with those ``nodes`` (its message names the first)."""
    loader_codes = {r.code for r in all_rules() if r.origin == "loader"} - {InternalError.code}
    out: list[Diagnostic] = []
    seen: dict[tuple, Diagnostic] = {}
    for d in diags:
        if d.node and d.code in loader_codes:
            key = (d.code, d.severity, d.message.replace(d.node, "\0"))
            first = seen.get(key)
            if first is not None:
                first.nodes.extend(n for n in d.nodes if n not in first.nodes)
                continue
            seen[key] = d
        out.append(d)
    return out


def finalize(diags: list[Diagnostic], ref: ModelRef, model: Model | None,
             settings: Settings) -> list[Diagnostic]:
    """Apply select/ignore and severity overrides; group the loader's findings by cause;
    attach model, file and line (of the finding's first node)."""
    out = []
    for d in group_loader_findings(diags):
        if d.code != InternalError.code and not settings.rule_enabled(d.code, d.rule):
            continue
        if d.code in settings.severity_overrides:
            d.severity = settings.severity_overrides[d.code]
        d.model = ref.display
        if model is not None:
            d.file = model.file
            node = model.graph.nodes.get(d.node) if d.node else None
            if node is not None:
                d.file_line = d.file_line or node.file_line
                d.location = d.location or node.location
        else:
            d.file = str(ref.path)
        out.append(d)
    out.sort(key=lambda d: d.sort_key)
    return out
