"""Shape inference against TensorFlow's own, on frozen Keras applications (issue 4).

The frozen GraphDef (tests/tfmodels.py, no ``_output_shapes`` recorded: only the input
Placeholder's shape and the Const tensors are given) is imported into a ``tf.Graph``; TF's
shape functions give ``op.outputs[i].shape``. placelint's ``infer_shapes`` on the same bytes
must give, for every output tensor, the very same shape: fully static ones equal, and with an
unknown batch dimension the same partial shapes (-1 where TF has None). Coverage = the fraction
of output tensors whose shape placelint infers fully static (the tensors whose transfer
bytes are known). Models are built once and cached with the Keras split differential's
(pytest cache, ``placelint-keras``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from differential.keras_report import app_names, frozen_graphdefs
from placelint.analyses.shape_inference import infer_shapes
from placelint.model.build import build_graph
from placelint.proto import GraphDef

pytestmark = pytest.mark.tf


@dataclass
class Comparison:
    tensors: int = 0
    static: int = 0                 # placelint: fully static
    tf_static: int = 0              # TF: fully defined
    partial: int = 0                # placelint: known rank, some dims unknown
    shape_diffs: list = field(default_factory=list)
    dtype_diffs: list = field(default_factory=list)

    @property
    def coverage(self) -> float:
        return self.static / self.tensors


def compare_with_tf(graph_def_bytes: bytes) -> Comparison:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    info = infer_shapes(build_graph(GraphDef.FromString(graph_def_bytes)).graph)
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(tf.compat.v1.GraphDef.FromString(graph_def_bytes), name="")
    c = Comparison()
    for op in g.get_operations():
        for i, out in enumerate(op.outputs):
            c.tensors += 1
            ours = info.shape(op.name, i)
            theirs = (None if out.shape.rank is None
                      else tuple(-1 if d is None else d for d in out.shape.as_list()))
            if ours is not None and all(d >= 0 for d in ours):
                c.static += 1
            elif ours is not None:
                c.partial += 1
            c.tf_static += out.shape.is_fully_defined()
            if ours != theirs:
                c.shape_diffs.append((op.name, op.type, i, ours, theirs))
            if info.dtype(op.name, i) != out.dtype.as_datatype_enum:
                c.dtype_diffs.append((op.name, op.type, i, info.dtype(op.name, i), out.dtype.name))
    return c


@pytest.fixture(scope="session")
def keras_cache(request: pytest.FixtureRequest) -> Path:
    return Path(request.config.cache.mkdir("placelint-keras"))


def _check(app: str, cache: Path, batch_size: int | None, record) -> Comparison:
    path = frozen_graphdefs([app], cache, batch_size=batch_size)[app]
    c = compare_with_tf(path.read_bytes())
    record(f"{app}_b{batch_size}_coverage", f"{c.static}/{c.tensors} = {c.coverage:.4f}")
    print(f"{app} batch {batch_size}: {c.static}/{c.tensors} tensors fully static "
          f"({100 * c.coverage:.1f}%), TF {c.tf_static}, partial {c.partial}")
    assert c.tensors > 1000
    assert c.shape_diffs == [], c.shape_diffs[:10]
    assert c.dtype_diffs == [], c.dtype_diffs[:10]
    assert c.static == c.tf_static            # placelint knows exactly what TF knows
    return c


def test_mobilenetv2_static_batch_every_shape_equals_tensorflows(keras_cache, record_property):
    c = _check("MobileNetV2", keras_cache, 1, record_property)
    assert c.static == c.tensors              # a static input: every tensor is static
    assert c.coverage == 1.0


def test_mobilenetv2_unknown_batch_same_partial_shapes(keras_cache, record_property):
    c = _check("MobileNetV2", keras_cache, None, record_property)
    # weights, BatchNorm constants and their folding chains stay static; activations do not
    assert 0.5 < c.coverage < 1.0
    assert c.partial == c.tensors - c.static  # never an unknown rank


@pytest.mark.slow
@pytest.mark.parametrize("batch_size", [1, None], ids=["batch1", "batchN"])
@pytest.mark.parametrize("app", [a for a in app_names() if a != "MobileNetV2"])
def test_other_keras_apps_match_tensorflow(app, batch_size, keras_cache, record_property):
    c = _check(app, keras_cache, batch_size, record_property)
    if batch_size == 1:
        assert c.coverage == 1.0
    else:
        assert c.partial == c.tensors - c.static
