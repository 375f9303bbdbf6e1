"""``placelint graph``: the view logic (pure Python), the DOT text, and the SVG that the real
Graphviz ``dot`` draws from the samples (CI installs graphviz)."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from placelint.cli import _register_commands, app
from placelint.model.graph import Edge, Graph, Node
from placelint.render.dot import PALETTE, SEVERITY_STYLE, human_bytes, to_dot, wrap_name
from placelint.render.run_dot import DotFailed, find_dot, render
from placelint.analyses.transfers import Transfer
from placelint.render.view import Finding, ViewError, ViewInputs, ViewOptions, build_view

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
SVG = "{http://www.w3.org/2000/svg}"
XLINK_TITLE = "{http://www.w3.org/1999/xlink}title"

_register_commands()
runner = CliRunner()


# --------------------------------------------------------------------------------------
# synthetic graphs (also used by benchmarks/bench_render.py)


def synthetic_graph(n: int, *, scopes: int = 0, hub_controls: int = 0, seed: int = 0) -> Graph:
    """A random DAG of ``n`` MatMul/Relu/AddV2 ops, each reading one or two earlier ops
    and its own Const weight; ``scopes`` > 0 spreads them over ``block_i/layer_j/`` name
    scopes; ``hub_controls`` > 0 adds an ``init`` NoOp with that many control inputs."""
    import random
    rng = random.Random(seed)
    g = Graph("synthetic")
    names: list[str] = []
    for i in range(n):
        prefix = f"block_{i * scopes // n}/layer_{i % 7}/" if scopes else ""
        name = f"{prefix}op_{i}"
        op = ("MatMul", "Relu", "AddV2")[i % 3]
        g.add_node(Node(name, op))
        w = g.add_node(Node(f"{name}/w", "Const"))
        if names:
            g.add_edge(Edge(names[-1], 0, name, 0))
            if op != "Relu" and len(names) > 2:
                g.add_edge(Edge(names[rng.randrange(max(0, len(names) - 20), len(names) - 1)], 0,
                                name, 1))
        elif op != "Relu":
            g.add_edge(Edge(w.name, 0, name, 1))
        names.append(name)
    if hub_controls:
        g.add_node(Node("init", "NoOp"))
        for k, src in enumerate(names[:hub_controls]):
            g.add_edge(Edge(src, -1, "init", -1))
    return g


def inputs_for(g: Graph, device: dict | None = None, **kw) -> ViewInputs:
    device = device if device is not None else {n: CPU0 for n in g.nodes}
    return ViewInputs(graph=g, device=device, devices=[CPU0, GPU0], title="t", **kw)


def chain(names_ops, edges=None) -> Graph:
    g = Graph("g")
    for name, op in names_ops:
        g.add_node(Node(name, op))
    for src, dst, *control in edges or []:
        slot = -1 if control and control[0] else 0
        g.add_edge(Edge(src, slot, dst, slot if slot < 0 else len(g.nodes[dst].data_inputs)))
    return g


# --------------------------------------------------------------------------------------
# view logic


def test_constants_hidden_unless_asked_or_copied():
    g = chain([("x", "Placeholder"), ("w", "Const"), ("wt", "Transpose"), ("mm", "MatMul"),
               ("s", "Shape"), ("r", "Reshape")],
              [("w", "wt"), ("x", "mm"), ("wt", "mm"), ("mm", "s"), ("mm", "r"), ("s", "r")])
    v = build_view(inputs_for(g))
    assert [u.name for u in v.units] == ["x", "mm", "r"]       # Const, its Transpose, Shape
    assert v.cheap == 3
    v = build_view(inputs_for(g), ViewOptions(show_cheap=True))
    assert len(v.units) == 6
    # a constant that is copied between devices stays visible
    dev = {n: CPU0 for n in g.nodes} | {"w": GPU0}
    cp = Transfer("w", 0, GPU0, CPU0, ["wt"], bytes=64)
    v = build_view(inputs_for(g, dev, copies=[cp]))
    assert {u.name for u in v.units} == {"x", "w", "wt", "mm", "r"}
    (edge,) = [e for e in v.edges if e.cross]
    assert edge.copies == (cp,) and v.units[[u.key for u in v.units].index(edge.src)].name == "w"


def test_identity_chains_are_contracted():
    g = chain([("a", "Relu"), ("id1", "Identity"), ("id2", "Identity"), ("b", "Relu")],
              [("a", "id1"), ("id1", "id2"), ("id2", "b")])
    v = build_view(inputs_for(g))
    assert [u.name for u in v.units] == ["a", "b"]
    assert [(e.src, e.dst, e.data) for e in v.edges] == [("op:a", "op:b", 1)]
    assert v.passthrough == 2


def test_hub_is_drawn_apart_without_edges():
    g = synthetic_graph(120, hub_controls=100)
    v = build_view(inputs_for(g), ViewOptions(hub_degree=40, max_nodes=200))
    hubs = v.hubs
    assert [h.name for h in hubs] == ["init"] and hubs[0].degree == 100
    assert not [e for e in v.edges if "hub:init" in (e.src, e.dst)]
    linked = [u for u in v.units if "init" in u.hub_links]
    assert len(linked) == 100
    # with hub extraction off, the 100 control edges are drawn
    v = build_view(inputs_for(g), ViewOptions(hub_degree=0, max_nodes=200))
    assert sum(e.control for e in v.edges) == 100


def test_scopes_collapse_to_the_budget_and_edges_merge():
    g = Graph("g")
    for scope in ("enc", "dec"):
        for i in range(30):
            g.add_node(Node(f"{scope}/op_{i}", "Relu"))
            if i:
                g.add_edge(Edge(f"{scope}/op_{i - 1}", 0, f"{scope}/op_{i}", 0))
    for i in range(0, 30, 3):                     # 10 edges enc -> dec
        g.add_edge(Edge(f"enc/op_{i}", 0, f"dec/op_{i + 1}", 1))
    v = build_view(inputs_for(g), ViewOptions(max_nodes=2))
    assert [(u.kind, u.name, u.members) for u in v.units] == [("scope", "enc", 30),
                                                             ("scope", "dec", 30)]
    assert [(e.src, e.dst, e.data) for e in v.edges] == [("scope:enc", "scope:dec", 10)]
    # --expand opens one scope whatever the budget
    v = build_view(inputs_for(g), ViewOptions(max_nodes=2, expand=("dec",)))
    kinds = {u.name: u.kind for u in v.units}
    assert kinds["enc"] == "scope" and kinds["dec/op_0"] == "op" and len(v.units) == 31
    assert [c.label for c in v.clusters] == ["dec"]
    with pytest.raises(ViewError, match="did you mean dec"):
        build_view(inputs_for(g), ViewOptions(expand=("deco",)))


def test_large_flat_scope_is_chunked_within_budget():
    g = synthetic_graph(1000)                      # 1000 ops at the top level, no scopes
    v = build_view(inputs_for(g), ViewOptions(max_nodes=50))
    assert len(v.units) <= 50
    assert sum(u.members for u in v.units) == 1000  # every drawn op is in some box
    chunks = [u for u in v.units if u.kind == "scope"]
    assert chunks and all(re.fullmatch(r"\[op_\d+ … op_\d+\]", u.label_name) for u in chunks)
    assert not v.clusters                          # open chunks leave no frame


def test_computation_opens_before_piles_of_sources():
    g = Graph("g")
    for i in range(40):                            # 40 variables, each its own scope
        g.add_node(Node(f"var_{i}/v", "VarHandleOp"))
    for i in range(40):
        g.add_node(Node(f"model/layer_{i}/op", "Relu"))
        g.add_edge(Edge(f"var_{i}/v", 0, f"model/layer_{i}/op", 0))
        if i:
            g.add_edge(Edge(f"model/layer_{i - 1}/op", 0, f"model/layer_{i}/op", 1))
    v = build_view(inputs_for(g), ViewOptions(max_nodes=60))
    ops = [u for u in v.units if u.kind == "op" and u.name.startswith("model/")]
    assert len(ops) == 40                          # the model's layers are all open
    assert len(v.units) <= 60


def test_focus_draws_a_neighbourhood():
    g = synthetic_graph(60)
    v = build_view(inputs_for(g), ViewOptions(focus=("op_30",), radius=1))
    names = {u.name for u in v.units}
    assert "op_30" in names and "op_29" in names and "op_31" in names
    assert "op_0" not in names and v.outside_focus > 0
    assert [u.focus for u in v.units if u.name == "op_30"] == [True]
    with pytest.raises(ViewError, match="no node named 'op_300'"):
        build_view(inputs_for(g), ViewOptions(focus=("op_300",)))


def test_mixed_device_scope_is_striped_and_unplaced_dashed():
    g = chain([("s/a", "Relu"), ("s/b", "Relu"), ("t", "Relu")], [("s/a", "s/b"), ("s/b", "t")])
    dev = {"s/a": CPU0, "s/b": GPU0, "t": None}
    v = build_view(inputs_for(g, dev), ViewOptions(max_nodes=2))
    (scope,) = [u for u in v.units if u.kind == "scope"]
    assert scope.devices == ((CPU0, 1), (GPU0, 1))
    dot = to_dot(v)
    assert f'fillcolor="{PALETTE[0]};0.500:{PALETTE[1]}", style="striped"' in dot
    assert re.search(r'label="t\\nRelu".*fillcolor="#FFFFFF", style="rounded,filled,dashed"', dot)


def test_findings_and_parallelism_marks_in_dot():
    g = chain([("a", "MatMul"), ("b", "Relu"), ("c", "Relu"), ("d", "Unique")],
              [("a", "b"), ("a", "c"), ("c", "d")])
    f = Finding("error", "PL101", "unknown-device", 'bad "device" on a', "wants CPU:1")
    v = build_view(inputs_for(g, findings={"a": [f]}, intra_op_types={"MatMul"},
                              antichain={"b", "c"}, width=2))
    assert [(u.name, u.intra_op, u.branches) for u in v.units] == [
        ("a", 1, 0), ("b", 0, 1), ("c", 0, 1), ("d", 0, 0)]
    dot = to_dot(v)
    colour, width_ = SEVERITY_STYLE["error"]
    line = {l.split()[0]: l for l in dot.splitlines() if re.match(r"\s+n\d+ \[", l)}
    assert f'color="{colour}", penwidth={width_}' in line["n1"] and "peripheries=2" in line["n1"]
    assert 'error PL101 [unknown-device] bad \\"device\\" on a' in line["n1"]
    assert "|| parallel branch" in line["n2"] and "|| parallel branch" in line["n3"]
    assert "peripheries" not in line["n2"] and "parallel" not in line["n4"]
    assert "widest set of parallel branches: 2 ops can run at once (inter-op width 2)" in dot
    assert "double border: splits over the intra-op pool (1 op)" in dot


def test_dot_uses_generated_ids_and_escapes_names():
    g = chain([('split:1"x', "Relu"), ("a\\b", "Relu")], [('split:1"x', "a\\b")])
    dot = to_dot(build_view(inputs_for(g)))
    assert "n1 -> n2" in dot
    assert 'label="split:1\\"x\\nRelu"' in dot and 'label="a\\\\b\\nRelu"' in dot
    out = subprocess.run([find_dot(), "-Tcanon"], input=dot.encode(), capture_output=True)
    assert out.returncode == 0, out.stderr


def test_view_and_dot_are_deterministic_across_processes(tmp_path):
    code = ("import sys; sys.path.insert(0, %r); from test_render import *; "
            "g = synthetic_graph(800, scopes=12, hub_controls=60, seed=3); "
            "sys.stdout.write(to_dot(build_view(inputs_for(g), ViewOptions(max_nodes=80))))"
            % str(Path(__file__).parent))
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONHASHSEED=str(seed)), check=True).stdout
            for seed in (1, 2)}
    assert len(outs) == 1 and "digraph placelint" in outs.pop()


def test_small_helpers():
    assert human_bytes(512) == "512 B" and human_bytes(2048) == "2.0 KiB"
    assert human_bytes(None) == "? B" and human_bytes(5 << 20) == "5.0 MiB"
    lines = wrap_name("StatefulPartitionedCall/model/conv2_block1_1_conv/Conv2D", 20)
    assert all(len(l) <= 21 for l in lines) and lines[0] == "StatefulPartitionedCall/"[:20]


# --------------------------------------------------------------------------------------
# the real dot


def _svg(tmp_path: Path, *args: str) -> ET.Element:
    out = tmp_path / "g.svg"
    res = runner.invoke(app, ["graph", *args, "-o", str(out)])
    assert res.exit_code == 0, res.output
    return ET.parse(out).getroot()


def _texts(el: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in el.iter(f"{SVG}text")]


def _fill(node: ET.Element) -> str:
    shape = next(e for e in node.iter() if e.tag in (f"{SVG}path", f"{SVG}polygon"))
    return shape.get("fill").upper()


def test_towers_svg_has_legend_device_colours_and_bold_copies(tmp_path):
    root = _svg(tmp_path, str(SAMPLES / "towers_gpu.pb"), "--devices", "CPU:0,GPU:0,GPU:1,GPU:2,GPU:3")
    texts = _texts(root)
    for entry in ("Devices", "CPU:0: 2 nodes", "GPU:0: 0 nodes", "GPU:2: 9 nodes",
                  "GPU:3: 9 nodes", "unplaced: 0 nodes", "Edges", "control", "Drawn"):
        assert entry in texts, entry
    assert any(t.startswith("copy between devices, bytes per step: 4 copies") for t in texts)
    # tower ops sit in clusters and are labelled relative to them: find nodes by tooltip
    by_tip = {}
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "node":
            a = next((x for x in g.iter(f"{SVG}a") if x.get(XLINK_TITLE)), None)
            if a is not None:
                by_tip[a.get(XLINK_TITLE).split(" (")[0]] = g
    colour = {n: _fill(by_tip[n]) for n in ("input", "sum", "tower_0/matmul0", "tower_0/relu2",
                                            "tower_1/matmul0")}
    assert colour["input"] == colour["sum"] == PALETTE[0]          # CPU:0
    assert colour["tower_0/matmul0"] == colour["tower_0/relu2"] == PALETTE[3]   # GPU:2
    assert colour["tower_1/matmul0"] == PALETTE[4]                               # GPU:3
    # the legend swatch of each device has that device's colour
    swatches = {p.get("fill").upper() for p in root.iter(f"{SVG}polygon")}
    assert {PALETTE[0], PALETTE[3], PALETTE[4]} <= swatches
    # four copies, each a "512 B" label on a bold edge (two bold segments per copy)
    assert texts.count("512 B") == 4
    bold = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge"
            and any(p.get("stroke-width") == "3" for p in g.iter(f"{SVG}path"))]
    assert len(bold) == 8
    thin = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge" and g not in bold]
    assert len(thin) == 10                          # the chains inside the towers


def test_cpu1_sample_error_is_outlined_with_message_tooltip(tmp_path):
    root = _svg(tmp_path, str(SAMPLES / "alexnet_cpu1_assign.pbtxt"), "--devices", "CPU=1")
    colour = SEVERITY_STYLE["error"][0].lower()
    hits = []
    for g in root.iter(f"{SVG}g"):
        if g.get("class") != "node":
            continue
        for a in g.iter(f"{SVG}a"):
            tip = a.get(XLINK_TITLE) or ""
            if "PL101 [unknown-device]" in tip:
                strokes = {p.get("stroke", "").lower() for p in g.iter() if p.get("stroke")}
                hits.append((tip, strokes))
    assert hits, "no node carries the PL101 finding"
    tip, strokes = hits[0]
    assert "Cannot assign a device for operation conv1_2/Assign_3/value" in tip
    assert colour in strokes
    assert "error finding: 1 box" in _texts(root)


def test_source_location_in_tooltip(tmp_path):
    root = _svg(tmp_path, str(SAMPLES / "keras_cnn"), "--devices", "CPU:0")
    tips = [a.get(XLINK_TITLE) for a in root.iter(f"{SVG}a") if a.get(XLINK_TITLE)]
    assert any(re.search(r"source: \S*make_samples\.py:\d+", t) for t in tips)


@pytest.mark.parametrize("sample", ["alexnet_cpu1_assign.pbtxt", "cpu_vars_gpu_ops.pbtxt",
                                    "py_function_branches.pbtxt", "towers_gpu.pb",
                                    "while_loop_v1.meta", "keras_cnn"])
def test_every_sample_renders(tmp_path, sample):
    root = _svg(tmp_path, str(SAMPLES / sample), "--devices", "CPU:0,CPU:1,GPU:0")
    assert root.tag == f"{SVG}svg" and "Devices" in _texts(root)


def test_svg_is_the_same_bytes_every_time(tmp_path):
    outs = set()
    for i in range(2):
        out = tmp_path / f"g{i}.svg"
        res = runner.invoke(app, ["graph", str(SAMPLES / "alexnet_cpu1_assign.pbtxt"), "-o",
                                  str(out), "--devices", "CPU:0,CPU:1", "--max-nodes", "40"])
        assert res.exit_code == 0, res.output
        outs.add(out.read_bytes())
    assert len(outs) == 1


def test_png_and_dot_outputs(tmp_path, monkeypatch):
    png = tmp_path / "g.png"
    res = runner.invoke(app, ["graph", str(SAMPLES / "towers_gpu.pb"), "-o", str(png)])
    assert res.exit_code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # .dot needs no Graphviz, and is the same bytes every time
    monkeypatch.setenv("PLACELINT_DOT", str(tmp_path / "no-such-dot"))
    outs = []
    for i in range(2):
        out = tmp_path / f"g{i}.dot"
        res = runner.invoke(app, ["graph", str(SAMPLES / "towers_gpu.pb"), "-o", str(out)])
        assert res.exit_code == 0, res.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0].startswith(b"digraph placelint {")


def test_missing_dot_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PLACELINT_DOT", str(tmp_path / "no-such-dot"))
    res = runner.invoke(app, ["graph", str(SAMPLES / "towers_gpu.pb"), "-o", str(tmp_path / "g.svg")])
    assert res.exit_code == 2
    assert "apt-get install graphviz" in res.output and "brew install graphviz" in res.output
    assert not (tmp_path / "g.svg").exists()


def test_usage_errors(tmp_path):
    res = runner.invoke(app, ["graph", str(SAMPLES / "towers_gpu.pb"), "-o", str(tmp_path / "g.jpg")])
    assert res.exit_code == 2 and "cannot tell the format" in res.output
    res = runner.invoke(app, ["graph", str(SAMPLES / "towers_gpu.pb"), "-o",
                              str(tmp_path / "g.dot"), "--focus", "tower_0/matmul"])
    assert res.exit_code == 2 and "did you mean" in res.output


def _fake_dot(tmp_path: Path, slow_unless: str) -> str:
    """A dot that hangs unless its arguments contain ``slow_unless``."""
    script = tmp_path / "fake-dot"
    script.write_text(f'#!/bin/sh\ncase "$*" in *{slow_unless}*) exec {find_dot()} "$@";; esac\n'
                      "exec sleep 30\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_dot_timeout_falls_back_to_a_cheaper_layout(tmp_path):
    src = to_dot(build_view(inputs_for(synthetic_graph(30))))
    res = render(src, "svg", timeout=4, dot=_fake_dot(tmp_path, "-Ksfdp"))
    assert res.layout == "sfdp" and res.fallback
    assert [a.outcome for a in res.attempts] == ["timeout", "timeout", "ok"]
    assert b"<svg" in res.data and res.seconds < 6
    with pytest.raises(DotFailed, match="smaller --max-nodes"):
        render(src, "svg", timeout=2, dot=_fake_dot(tmp_path, "-Knever"))


def test_hub_graph_renders_fast(tmp_path):
    """dot takes minutes on a 1k-node graph with a 320-edge init hub; drawn apart, not."""
    g = synthetic_graph(1000, scopes=10, hub_controls=320)
    v = build_view(inputs_for(g))
    assert [h.name for h in v.hubs] == ["init"]
    res = render(to_dot(v), "svg", timeout=30)
    assert res.layout == "dot" and res.seconds < 10


@pytest.mark.slow
def test_keras_model_renders_under_10s(tmp_path):
    import time
    sys.path.insert(0, str(Path(__file__).parent))
    from tfmodels import keras_app_savedmodel
    path = keras_app_savedmodel("MobileNetV2", tmp_path / "m")
    t0 = time.monotonic()
    root = _svg(tmp_path, str(path), "--devices", "CPU:0,GPU:0")
    assert time.monotonic() - t0 < 10 and "Devices" in _texts(root)


def test_memory_bars_share_one_scale_and_mark_the_budget():
    """The legend draws each device's resident and peak bytes as a bar on one scale (the
    largest total or budget is BAR_PX wide), outlines the budget, and turns red past it."""
    from placelint.render.memory_bars import BAR_PX, OVER_RESIDENT_FILL, PEAK_FILL, RESIDENT_FILL

    def mem(resident, peak, budget=None):
        return {"resident_bytes": resident, "peak_bytes": peak, "peak_lower_bound_bytes": 0,
                "unknown_ops": [], "largest": [], "budget_bytes": budget,
                "budget": None if budget is None else "x"}
    g = chain([("x", "Placeholder"), ("y", "Relu")], [("x", "y")])
    dot = to_dot(build_view(inputs_for(g, memory={CPU0: mem(3 << 20, 1 << 20, 8 << 20),
                                                  GPU0: mem(6 << 20, 4 << 20, 8 << 20)})))
    assert "CPU:0: 3.0 MiB resident + 1.0 MiB peak = 4.0 MiB of 8.0 MiB (50%)" in dot
    assert "GPU:0: 6.0 MiB resident + 4.0 MiB peak = 10.0 MiB of 8.0 MiB (125%)" in dot
    cells = re.findall(r'WIDTH="(\d+)" HEIGHT="10" BGCOLOR="(#[0-9A-F]+)" BORDER="(\d)"', dot)
    # the scale: GPU:0's 10 MiB total is the largest, BAR_PX (160) wide
    assert cells == [(str(BAR_PX * 3 // 10), RESIDENT_FILL, "0"), (str(BAR_PX // 10), PEAK_FILL, "0"),
                     (str(BAR_PX * 4 // 10), "#FFFFFF", "1"),          # CPU:0's free budget
                     (str(BAR_PX * 6 // 10), OVER_RESIDENT_FILL, "0"),  # GPU:0 over its budget
                     (str(BAR_PX * 4 // 10), "#EE9988", "0")]
    # no memory analysed (a placement TF refuses): no memory rows
    assert "Memory</B>" not in to_dot(build_view(inputs_for(g)))
