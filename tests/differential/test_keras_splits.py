"""Model parallelism by hand on real Keras applications: TF and placelint agree on every node's
device and on the set of transfers (issue 4).

A frozen MobileNetV2 (96x96 input) has its top-level layers split over CPU:0..2 by name
(keras_report.split_layers: contiguous thirds, and round robin); TensorFlow (the oracle, a
3-CPU session) and ``place_graphdef(..., devices="CPU=3")`` place it. Built models and TF's
verdicts are cached in pytest's cache (``placelint-keras``); a cold run builds MobileNetV2 and
runs two TF sessions. The other four applications run in a slow test; all five in
``python -m tests.differential.keras_report``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from placelint.proto import GraphDef

from .keras_report import (
    MODES,
    SplitComparison,
    app_names,
    frozen_graphdefs,
    layer_of,
    layer_order,
    run,
    split_case,
    split_layers,
)


@pytest.fixture(scope="session")
def keras_cache(request: pytest.FixtureRequest) -> Path:
    return Path(request.config.cache.mkdir("placelint-keras"))


def _check(c: SplitComparison) -> None:
    assert c.tf_status == "placed"
    assert not c.pl_errors, c.pl_errors[:3]
    assert c.nodes > 1000
    assert c.mismatches == [], c.mismatches[:10]
    assert c.agree == c.nodes
    # the split really spreads the model: every CPU holds a good share of the nodes
    assert set(c.devices_used) == {"CPU:0", "CPU:1", "CPU:2"}
    assert min(c.devices_used.values()) > c.nodes // 6, c.devices_used
    assert c.missing == [], c.missing[:10]
    assert c.extra == [], c.extra[:10]
    assert c.consumers_equal is True
    assert c.dtypes_equal is True
    data = c.tf_transfers - c.tf_control
    assert data >= 2          # at least the activations crossing the two boundaries
    assert c.pl_bytes_unknown == 0    # static input shape: every transferred tensor has a size
    assert c.pl_data_bytes > 0


@pytest.mark.tf
def test_mobilenetv2_split_over_three_cpus(keras_cache: Path) -> None:
    rows = {c.mode: c for c in run(["MobileNetV2"], MODES, keras_cache)}
    assert set(rows) == set(MODES)
    for c in rows.values():
        _check(c)
    contiguous, rr = rows["contiguous"], rows["round_robin"]
    # round robin cuts nearly every layer boundary, contiguous thirds only two
    assert rr.tf_transfers - rr.tf_control > 10 * (contiguous.tf_transfers - contiguous.tf_control)
    assert rr.pl_data_bytes > 10 * contiguous.pl_data_bytes


@pytest.mark.tf
@pytest.mark.slow
@pytest.mark.parametrize("app", [a for a in app_names() if a != "MobileNetV2"])
def test_other_keras_apps_split_over_three_cpus(app: str, keras_cache: Path) -> None:
    rows = run([app], MODES, keras_cache)
    assert [c.mode for c in rows] == list(MODES)
    for c in rows:
        _check(c)


# --------------------------------------------------------------------------- the split itself


def _toy() -> GraphDef:
    """input -> m/a_1/conv -> m/b_1/relu -> m/c_1/add <- m/d_1/w (a weight: no input path),
    plus top-level NoOp and Identity."""
    from google.protobuf import text_format

    return text_format.Parse(
        """
        node { name: "input" op: "Placeholder"
               attr { key: "dtype" value { type: DT_FLOAT } }
               attr { key: "shape" value { shape { dim { size: 1 } dim { size: 2 } } } } }
        node { name: "m/d_1/w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
               attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {
                 dim { size: 1 } dim { size: 2 } } float_val: 1 } } } }
        node { name: "m/d_1/read" op: "Identity" input: "m/d_1/w"
               attr { key: "T" value { type: DT_FLOAT } } }
        node { name: "m/c_1/add" op: "AddV2" input: "m/b_1/relu" input: "m/d_1/read"
               attr { key: "T" value { type: DT_FLOAT } } }
        node { name: "m/b_1/relu" op: "Relu" input: "m/a_1/conv"
               attr { key: "T" value { type: DT_FLOAT } } }
        node { name: "m/a_1/conv" op: "Neg" input: "input"
               attr { key: "T" value { type: DT_FLOAT } } }
        node { name: "m/a_1/sub/x" op: "Abs" input: "m/a_1/conv"
               attr { key: "T" value { type: DT_FLOAT } } }
        node { name: "NoOp" op: "NoOp" input: "^m/d_1/read" }
        node { name: "Identity" op: "Identity" input: "m/c_1/add" input: "^NoOp"
               attr { key: "T" value { type: DT_FLOAT } } }
        """,
        GraphDef(),
    )


def test_layer_of_is_the_second_name_component() -> None:
    assert layer_of("mobilenetv2_1.00_96_1/block_1_expand_1/convolution") == "block_1_expand_1"
    assert layer_of("resnet50_1/conv2_block1_1_bn_1/batchnorm/add/y") == "conv2_block1_1_bn_1"
    assert layer_of("input") is None
    assert layer_of("model/NoOp") is None


def _toy_with_mul() -> GraphDef:
    """The toy with layer d reached from the input too: m/d_1/mul = add * read."""
    gd = _toy()
    mul = gd.node.add()
    mul.CopyFrom([n for n in gd.node if n.name == "m/c_1/add"][0])
    mul.name = "m/d_1/mul"
    mul.input[:] = ["m/c_1/add", "m/d_1/read"]
    return gd


def test_layer_order_follows_the_network_not_the_node_order() -> None:
    # node order lists d (weights), c, b before a; depth from the input says a, b, c, d
    assert layer_order(_toy_with_mul()) == ["a_1", "b_1", "c_1", "d_1"]


def test_a_layer_the_input_never_reaches_is_refused() -> None:
    with pytest.raises(AssertionError, match="d_1"):
        layer_order(_toy())


def test_split_modes_assign_whole_layers_and_leave_top_level_nodes_free() -> None:
    gd = _toy_with_mul()
    names = [n.name for n in gd.node]
    contiguous, dev_c = split_layers(gd, 3, "contiguous")
    rr, dev_rr = split_layers(gd, 3, "round_robin")
    assert dev_c == {"a_1": 0, "b_1": 0, "c_1": 1, "d_1": 2}     # i * 3 // 4
    assert dev_rr == {"a_1": 0, "b_1": 1, "c_1": 2, "d_1": 0}    # i mod 3
    for split, dev in ((contiguous, dev_c), (rr, dev_rr)):
        assert [n.name for n in split.node] == names
        for n in split.node:
            layer = layer_of(n.name)
            want = "" if layer is None else f"/device:CPU:{dev[layer]}"
            assert n.device == want, n.name
    assert all(n.device == "" for n in gd.node), "the input GraphDef is not modified"
    assert split_layers(gd, 3, "contiguous")[0] == contiguous     # deterministic
    with pytest.raises(ValueError):
        split_layers(gd, 3, "random")


@pytest.mark.tf
def test_split_case_on_mobilenetv2(keras_cache: Path) -> None:
    frozen = frozen_graphdefs(["MobileNetV2"], keras_cache)["MobileNetV2"]
    original = GraphDef.FromString(frozen.read_bytes())
    gd = GraphDef.FromString(split_case(frozen, "contiguous"))
    assert [n.name for n in gd.node] == [n.name for n in original.node]
    by_name = {n.name: n for n in gd.node}
    assert by_name["input"].op == "Const" and by_name["input"].device == ""
    shape = [d.size for d in by_name["input"].attr["value"].tensor.tensor_shape.dim]
    assert shape == [1, 96, 96, 3]
    assert len(by_name["input"].attr["value"].tensor.tensor_content) == 4 * 96 * 96 * 3
    assert by_name["NoOp"].device == "" and by_name["Identity"].device == ""
    order = layer_order(original)
    assert order[0] == "Conv1_1" and order[-1] == "predictions_1"
    devices = [by_name[n.name].device for n in original.node if layer_of(n.name)]
    assert devices.count("/device:CPU:0") and devices.count("/device:CPU:2")
    first = [n for n in gd.node if layer_of(n.name) == "Conv1_1"]
    last = [n for n in gd.node if layer_of(n.name) == "predictions_1"]
    assert {n.device for n in first} == {"/device:CPU:0"}
    assert {n.device for n in last} == {"/device:CPU:2"}
