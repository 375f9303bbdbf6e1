"""Scenarios ported from TensorFlow's placer_test.cc (tests/placer_facts/scenarios.toml) run
through placelint's placer; plus checks that the data itself is sound: every graph imports into
TensorFlow, every real op stands in for its fake op with the claimed CPU/GPU kernels, every
expectation names nodes that exist and covers the whole graph."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

FACTS = Path(__file__).parent / "placer_facts"
MANIFEST = tomllib.loads((FACTS / "scenarios.toml").read_text())
SCENARIOS: list[dict[str, Any]] = MANIFEST["scenario"]
DEVICE_SETS: dict[str, list[str]] = MANIFEST["device_sets"]
ERROR_CODES = {"PL101", "PL102", "PL103", "PL104"}


def graph_def(sc: dict[str, Any]) -> graph_pb2.GraphDef:
    return text_format.Parse((FACTS / sc["graph"]).read_text(), graph_pb2.GraphDef())


def full(sc: dict[str, Any], device: str) -> str:
    if device.startswith("/"):
        return device
    prefix = DEVICE_SETS[sc["devices"]][0].split("/device:")[0]
    return f"{prefix}/device:{device}"


def expected_placement(sc: dict[str, Any]) -> dict[str, str]:
    want = {n: full(sc, d) for n, d in sc.get("placement", {}).items()}
    if "all_other" in sc:
        for n in graph_def(sc).node:
            want.setdefault(n.name, full(sc, sc["all_other"]))
    return want


def ids(scenarios: list[dict[str, Any]]) -> list[str]:
    return [s["name"] for s in scenarios]


# ---------------------------------------------------------------------------------------------
# The data


def test_manifest_is_consistent() -> None:
    names = [s["name"] for s in SCENARIOS]
    assert len(names) == len(set(names))
    used = {s["graph"] for s in SCENARIOS}
    assert used == {p.name for p in FACTS.glob("*.pbtxt")}
    assert len(SCENARIOS) >= 40
    kinds = {"placement", "same_device", "error"}
    for sc in SCENARIOS:
        assert sc["devices"] in DEVICE_SETS, sc["name"]
        assert isinstance(sc["soft"], bool), sc["name"]
        assert len(kinds & set(sc)) == 1, sc["name"]
        nodes = {n.name for n in graph_def(sc).node}
        mentioned: set[str] = set(sc.get("placement", {}))
        for group in sc.get("same_device", []):
            mentioned |= set(group)
        mentioned |= set(sc.get("error", {}).get("nodes", []))
        for claim in sc.get("kernels", {}).values():
            mentioned |= set(claim)
        assert mentioned <= nodes, (sc["name"], mentioned - nodes)
        if "placement" in sc:  # an expected device for every node
            assert set(expected_placement(sc)) == nodes, (sc["name"], nodes - set(sc["placement"]))
            devices = set(DEVICE_SETS[sc["devices"]])
            assert set(expected_placement(sc).values()) <= devices, sc["name"]
        if "error" in sc:
            assert sc["error"]["code"] in ERROR_CODES, sc["name"]
            assert sc["error"]["nodes"], sc["name"]
    assert {s["error"]["code"] for s in SCENARIOS if "error" in s} == ERROR_CODES
    assert {True, False} == {s["soft"] for s in SCENARIOS}


def _import_raw(tf: Any, gd_bytes: bytes) -> Any:
    """TF's C++ importer on the bytes as written (no Python device rewriting)."""
    from tensorflow.python.client import pywrap_tf_session as c_api
    from tensorflow.python.framework import c_api_util

    graph = tf.Graph()
    scoped = c_api_util.ScopedTFImportGraphDefOptions()
    c_api.TF_ImportGraphDefOptionsSetPrefix(scoped.options, "")
    buf = c_api.TF_NewBufferFromString(gd_bytes)
    try:
        with graph._c_graph.get() as c_graph:  # noqa: SLF001
            c_api_util.ScopedTFImportGraphDefResults(
                c_api.TF_GraphImportGraphDefWithResults(c_graph, buf, scoped.options))
    finally:
        c_api.TF_DeleteBuffer(buf)
    graph._add_new_tf_operations(compute_devices=False)  # noqa: SLF001
    return graph


@pytest.mark.tf
@pytest.mark.parametrize("graph_file", sorted(p.name for p in FACTS.glob("*.pbtxt")))
def test_graph_imports_into_tensorflow(graph_file: str) -> None:
    import tensorflow as tf

    gd = text_format.Parse((FACTS / graph_file).read_text(), graph_pb2.GraphDef())
    graph = _import_raw(tf, gd.SerializeToString())
    assert {op.name for op in graph.get_operations()} == {n.name for n in gd.node}


def _kernel_types(tf: Any, gd: graph_pb2.GraphDef, node_name: str) -> set[str]:
    """Device types among CPU/GPU with a kernel for the node, by TF's own kernel lookup
    (includes the DEFAULT-kernel fallback)."""
    from tensorflow.core.framework import node_def_pb2
    from tensorflow.python.framework import op_def_registry
    from tensorflow.python.util import _pywrap_kernel_registry

    node = next(n for n in gd.node if n.name == node_name)
    nd = node_def_pb2.NodeDef.FromString(node.SerializeToString())
    op_def = op_def_registry.get(nd.op)
    assert op_def is not None, nd.op
    for a in op_def.attr:  # the kernel lookup wants every attr, defaults included
        if a.name not in nd.attr and a.HasField("default_value"):
            nd.attr[a.name].CopyFrom(a.default_value)
    out = set()
    for dev in ("CPU", "GPU"):
        nd.device = f"/device:{dev}:0"
        if _pywrap_kernel_registry.TryFindKernelClass(nd.SerializeToString()):
            out.add(dev)
    return out


@pytest.mark.tf
@pytest.mark.parametrize("sc", [s for s in SCENARIOS if "kernels" in s],
                         ids=ids([s for s in SCENARIOS if "kernels" in s]))
def test_stand_in_kernels(sc: dict[str, Any]) -> None:
    import tensorflow as tf

    gd = graph_def(sc)
    want = {"cpu": {"CPU"}, "gpu": {"GPU"}, "cpu_gpu": {"CPU", "GPU"}}
    for kind, nodes in sc["kernels"].items():
        for name in nodes:
            assert _kernel_types(tf, gd, name) == want[kind], (sc["name"], name, kind)


# ---------------------------------------------------------------------------------------------
# placelint


@pytest.mark.parametrize("sc", SCENARIOS, ids=ids(SCENARIOS))
def test_placer_fact(sc: dict[str, Any]) -> None:
    from placelint.api import place_graphdef

    gd = graph_def(sc)
    r = place_graphdef(gd.SerializeToString(), devices=DEVICE_SETS[sc["devices"]],
                       allow_soft_placement=sc["soft"])
    errors = [(e.code, e.node, list(e.related_nodes or []), e.message) for e in r.errors]
    if "error" in sc:
        code, nodes = sc["error"]["code"], set(sc["error"]["nodes"])
        hits = [e for e in r.errors
                if e.code == code and ({e.node} | set(e.related_nodes or [])) & nodes]
        assert hits, f"expected {code} naming one of {sorted(nodes)}, got {errors}"
        return
    assert not errors, errors
    got = dict(r.placement)
    if "placement" in sc:
        want = expected_placement(sc)
        wrong = {n: (d, got.get(n)) for n, d in want.items() if got.get(n) != d}
        assert not wrong, f"node: (expected, placelint) {wrong}"
    for group in sc.get("same_device", []):
        devices = {got.get(n) for n in group}
        assert None not in devices and len(devices) == 1, {n: got.get(n) for n in group}
