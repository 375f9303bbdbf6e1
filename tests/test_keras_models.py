"""Issue 2, done-when for Keras: real Keras applications load through placelint.

Each application (tests/tfmodels.py, weights=None) is saved as a TF2 SavedModel (with debug
info; ``serving_default`` calls a ``tf.function`` that calls the model) and as a frozen
GraphDef. Both load through ``discover`` / ``load_raw`` / ``model_from_raw`` and a full
``check`` run with no error diagnostics and no PL009; the SavedModel's ``serving_default``
signature expands to at least the ops of the ``__inference_*`` function that implements it
(every op of that function the signature's outputs depend on is in the expanded graph, and
the expansion computes the same ops as the frozen graph); nodes carry source locations in the
Python file that built the model. MobileNetV2 runs by default, all five in the slow test.
Models are cached with the Keras split differential's (pytest cache, ``placelint-keras``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from differential.keras_report import app_names, frozen_graphdefs, savedmodels
from placelint.diagnostics import Severity
from placelint.loaders import discover, load_raw
from placelint.model import model_from_raw
from placelint.model.devices import DeviceSet
from placelint.pipeline import analyze
from placelint.proto_lite import real_node
from placelint.settings import Settings

pytestmark = pytest.mark.tf

TFMODELS = Path(__file__).resolve().parent / "tfmodels.py"
PLUMBING = ("_Arg", "_Retval", "NoOp")
#: ops that only move or hold values: where the SavedModel and the frozen graph legitimately
#: differ (variables vs constants, call boundaries)
HOLDERS = PLUMBING + ("Const", "Identity", "ReadVariableOp", "VarHandleOp", "Placeholder")


@pytest.fixture(scope="session")
def keras_cache(request: pytest.FixtureRequest) -> Path:
    return Path(request.config.cache.mkdir("placelint-keras"))


def _called(nodes) -> list[str]:
    """Functions the nodes call (func attrs and func lists: f, body, branches...)."""
    out = []
    for n in nodes:
        for value in real_node(n).attr.values():   # (a binary model's nodes are lite)
            if value.HasField("func") and value.func.name:
                out.append(value.func.name)
            out.extend(f.name for f in value.list.func if f.name)
    return out


def implementing_function(graph_def, library, outputs: list[str]) -> tuple[str, list[str]]:
    """The function that implements a signature (``library``: the graph's functions): follow
    the calls from the nodes producing the signature's outputs; the largest body in that call
    tree. Returns it and the tree."""
    by_name = {n.name: n for n in graph_def.node}
    todo = _called(by_name[t.split(":")[0]] for t in outputs)
    tree: list[str] = []
    while todo:
        name = todo.pop()
        if name in tree or name not in library:
            continue
        tree.append(name)
        todo.extend(_called(library[name].node_def))
    assert tree, f"no function called by the signature outputs {outputs}"
    return max(tree, key=lambda f: len(library[f].node_def)), tree


def live_ops(fdef) -> set[str]:
    """Ops of a function body its results (``ret``, ``control_ret``) depend on."""
    nodes = {n.name: n for n in fdef.node_def}
    todo = [v.split(":")[0].lstrip("^") for v in fdef.ret.values()]
    todo += list(fdef.control_ret.values())
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name not in nodes:
            continue            # a function argument
        seen.add(name)
        todo.extend(i.lstrip("^").split(":")[0] for i in nodes[name].input)
    return {n for n in seen if nodes[n].op not in PLUMBING}


@dataclass
class Counts:
    expanded: int           # SavedModel, serving_default expanded: ops (no _Arg/_Retval/NoOp)
    function: str           # the implementing __inference_* function
    function_ops: int       # its body's ops (no NoOp)
    function_live: int      # of which the signature's outputs depend on
    frozen: int             # frozen GraphDef: ops (no NoOp)


def _no_errors(path: Path) -> None:
    report = analyze(discover([path])[0], Settings(devices=DeviceSet.parse("CPU=1")))
    assert report.model is not None
    bad = [d for d in report.diagnostics if d.severity is Severity.ERROR or d.code == "PL009"]
    assert bad == [], [f"{d.code} {d.node}: {d.message[:200]}" for d in bad]


def check_app(app: str, cache: Path, record) -> Counts:
    saved = savedmodels([app], cache)[app]
    frozen = frozen_graphdefs([app], cache)[app]

    # -- the SavedModel
    refs = discover([saved])
    assert [r.kind for r in refs] == ["savedmodel"]
    raw = load_raw(refs[0])
    assert raw.entry == "signature 'serving_default'"
    assert raw.debug_info is not None
    model = model_from_raw(raw)
    bad = [d for d in model.diagnostics if d.severity is Severity.ERROR or d.code == "PL009"]
    assert bad == [], [f"{d.code}: {d.message[:200]}" for d in bad]
    _no_errors(saved)

    impl, tree = implementing_function(raw.graph_def, raw.functions(),
                                       list(raw.steps[raw.step].fetches))
    assert impl.startswith("__inference_") and "traced_" not in impl, (impl, tree)
    fdef = raw.functions()[impl]
    function_ops = [n for n in fdef.node_def if n.op not in PLUMBING]
    live = live_ops(fdef)
    # the signature's step (the loader places the whole MetaGraph; serving runs this)
    expanded = [n for n in model.build_step().graph if n.op not in PLUMBING]
    assert len(expanded) >= len(function_ops)
    # every live op of the implementing function is in the expansion, once, and nothing else
    # of it: the expanded node is named <call site>/<op> and remembers its function
    from_impl = {n.name[len(n.call_site) + 1:] for n in expanded if n.function == impl}
    assert from_impl == live
    assert sum(1 for n in expanded if n.function == impl) == len(live)
    assert len(live) > 0.9 * len(function_ops)

    # the same computation as the frozen graph
    frozen_raw = load_raw(discover([frozen])[0])
    frozen_model = model_from_raw(frozen_raw)
    bad = [d for d in frozen_model.diagnostics
           if d.severity is Severity.ERROR or d.code == "PL009"]
    assert bad == [], [f"{d.code}: {d.message[:200]}" for d in bad]
    _no_errors(frozen)
    frozen_ops = [n for n in frozen_model.graph if n.op not in PLUMBING]
    compute = Counter(n.op for n in expanded if n.op not in HOLDERS)
    assert compute == Counter(n.op for n in frozen_ops if n.op not in HOLDERS)
    assert sum(compute.values()) > 100

    # source locations: the model's ops point at the line of tfmodels.py that called it
    call_line = next(i for i, line in enumerate(TFMODELS.read_text().splitlines(), 1)
                     if 'model(x, training=False)}' in line)
    located = [n for n in expanded if n.location is not None]
    here = [n for n in located if Path(n.location.file).resolve() == TFMODELS]
    assert here, Counter(n.location.file for n in located).most_common(3)
    at_call = [n for n in here if n.location.line == call_line and n.location.function == "serve"]
    assert len(at_call) >= sum(compute.values())       # at least every compute op
    assert all(n.location is None for n in frozen_model.graph)   # no debug info there

    counts = Counts(len(expanded), impl, len(function_ops), len(live), len(frozen_ops))
    record(f"{app}_counts", str(counts))
    print(f"{app}: SavedModel expanded {counts.expanded} ops; {impl} {counts.function_ops} "
          f"ops ({counts.function_live} live); frozen {counts.frozen} ops; "
          f"{len(here)} nodes located in tfmodels.py")
    return counts


def test_mobilenetv2_loads_as_savedmodel_and_frozen_graph(keras_cache, record_property):
    c = check_app("MobileNetV2", keras_cache, record_property)
    # 52 BatchNorms x 4 variables + 35 convolutions + 17 depthwise + 2 dense = 262 variables:
    # one VarHandleOp at the top level each, one ReadVariableOp in the function each
    # + the wrapper's Identity; the fed input is cut (an _Arg from the client stands for it)
    assert c.expanded - c.function_live == 262 + 1


@pytest.mark.slow
@pytest.mark.parametrize("app", [a for a in app_names() if a != "MobileNetV2"])
def test_other_keras_apps_load(app, keras_cache, record_property):
    c = check_app(app, keras_cache, record_property)
    assert c.expanded > c.function_live
