"""Facts about TensorFlow 2.21's ops and kernels, read from the shipped opdb.

No TensorFlow here: these run on the generated data only.  Each test asserts
something TensorFlow itself does (kernel registrations in tensorflow/core/kernels,
OpDefs in tensorflow/core/ops), so a broken generator or lookup fails them.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.node_def_pb2 import NodeDef

from placelint import dtypes
from placelint.opdb import KernelMatchError, OpDBError, get_opdb

FLOAT, DOUBLE, INT32, STRING, INT64, BOOL, HALF = 1, 2, 3, 7, 9, 10, 19
RESOURCE, VARIANT = 20, 21
FLOAT_REF = 101


def T(dtype: int) -> AttrValue:
    return AttrValue(type=dtype)


def TL(*types: int) -> AttrValue:
    return AttrValue(list=AttrValue.ListValue(type=list(types)))


def I(n: int) -> AttrValue:  # noqa: E743
    return AttrValue(i=n)


def S(s: str) -> AttrValue:
    return AttrValue(s=s.encode())


@pytest.fixture(scope="module")
def db():
    return get_opdb()


# --------------------------------------------------------------------------- database


def test_header_records_tf_release(db):
    assert db.tf_version == "2.21.0"
    assert len(db) > 1800
    assert {"CPU", "GPU", "DEFAULT"} <= set(db.device_types)
    assert db.symbolic_device_types == {"XLA_CPU_JIT", "XLA_GPU_JIT"}
    assert db.op_names() == sorted(db.op_names())


def test_unknown_op_is_none(db):
    assert db.op("NoSuchOpAnywhere") is None
    assert "NoSuchOpAnywhere" not in db
    assert "MatMul" in db


def test_internal_ops_are_present(db):
    # The placer and partitioner need these runtime ops too.
    for name in ("_Arg", "_Retval", "_Send", "_Recv", "_HostSend", "StatefulPartitionedCall"):
        assert name in db


def test_opinfo_is_cached(db):
    assert db.op("MatMul") is db.op("MatMul")


# --------------------------------------------------------------------------- kernels


def test_matmul_int32_is_cpu_only_float_has_gpu(db):
    matmul = db.op("MatMul")
    assert matmul.supported_device_types({"T": T(INT32)}) == {"CPU": 0}
    assert set(matmul.supported_device_types({"T": T(FLOAT)})) >= {"CPU", "GPU"}
    assert matmul.find_kernel("GPU", {"T": T(INT32)}) is None
    assert matmul.kernel_priority("GPU", {"T": T(FLOAT)}) == 0
    # bool has no MatMul kernel at all
    assert matmul.supported_device_types({"T": T(BOOL)}) == {}


def test_string_join_is_cpu_only(db):
    join = db.op("StringJoin")
    assert join.supported_device_types({"N": I(2)}) == {"CPU": 0}
    assert join.supported_device_types({"N": I(2)}, device_types=["CPU", "GPU"]) == {"CPU": 0}


def test_default_only_op_runs_on_any_non_symbolic_device(db):
    # Assert is registered only for DEVICE_DEFAULT.
    assert_op = db.op("Assert")
    attrs = {"T": TL(FLOAT)}
    assert {k.device_type for k in assert_op.kernels} == {"DEFAULT"}
    assert assert_op.supported_device_types(attrs) == {"DEFAULT": 0}
    resolved = assert_op.supported_device_types(
        attrs, device_types=["CPU", "GPU", "TPU", "MY_PLUGGABLE", "XLA_CPU_JIT", "XLA_GPU_JIT"]
    )
    assert resolved == {"CPU": 0, "GPU": 0, "TPU": 0, "MY_PLUGGABLE": 0}
    assert assert_op.find_kernel("GPU", attrs).device_type == "DEFAULT"


def test_default_kernel_fills_in_when_own_kernels_do_not_match(db):
    # ReadVariableOp has its own CPU kernel; GPU uses the DEFAULT one.
    read = db.op("ReadVariableOp")
    attrs = {"dtype": T(FLOAT)}
    assert read.find_kernel("CPU", attrs).device_type == "CPU"
    assert read.find_kernel("GPU", attrs).device_type == "DEFAULT"
    # ConcatV2 int32 has no GPU kernel of its own but a DEFAULT (host-memory) one.
    concat = db.op("ConcatV2")
    attrs = {"N": I(2), "T": T(INT32)}
    assert concat.find_kernel("GPU", attrs).device_type == "DEFAULT"
    assert concat.find_kernel("GPU", {"N": I(2), "T": T(FLOAT)}).device_type == "GPU"
    assert concat.supported_device_types(attrs)["DEFAULT"] == 0
    assert "GPU" not in concat.supported_device_types(attrs)


def test_kernel_priority(db):
    # Dataset iterator kernels: CPU registered at priority 2, GPU at 1, XLA at 0.
    it = db.op("AnonymousIteratorV3")
    attrs = {"output_types": TL(FLOAT), "output_shapes": AttrValue(list=AttrValue.ListValue())}
    assert it.supported_device_types(attrs) == {"CPU": 2, "GPU": 1, "XLA_CPU": 0, "XLA_GPU": 0}
    assert it.kernel_priority("CPU", attrs) == 2


def test_string_constraint(db):
    # GatherNd's GPU kernels do not accept bad_indices_policy='ERROR'.
    gather = db.op("GatherNd")
    base = {"Tparams": T(FLOAT), "Tindices": T(INT32)}
    assert {"CPU", "GPU"} <= set(gather.supported_device_types(base))  # default ''
    assert set(gather.supported_device_types({**base, "bad_indices_policy": S("ERROR")})) == {"CPU"}
    assert gather.supported_device_types({**base, "bad_indices_policy": S("BOGUS")}) == {}


def test_kernel_label_selects_labelled_kernels(db):
    op = db.op("KernelLabel")
    assert op.find_kernel("CPU", {}).label == ""
    assert op.find_kernel("CPU", {"_kernel": S("overload_1")}).label == "overload_1"
    assert op.find_kernel("CPU", {"_kernel": S("no_such_label")}) is None
    # Labelled-only kernels (e.g. cudnn) are not used without the label.
    conv = db.op("Conv2DBackpropFilter")
    attrs = {"T": T(FLOAT)}
    assert conv.find_kernel("CPU", attrs).label == ""
    labelled = conv.find_kernel("CPU", {**attrs, "_kernel": S("eigen_tensor")})
    assert labelled.label == "eigen_tensor"


def test_constraint_on_attr_missing_from_opdef_is_an_error(db):
    # TopK's kernels constrain 'index_type', which the deprecated OpDef lacks:
    # TF's KernelAttrsMatch fails with InvalidArgument.
    topk = db.op("TopK")
    with pytest.raises(KernelMatchError, match="index_type"):
        topk.supported_device_types({"T": T(FLOAT), "k": I(1)})
    # Supplying the attr explicitly makes the lookup work.
    found = topk.supported_device_types({"T": T(FLOAT), "k": I(1), "index_type": T(INT32)})
    assert "CPU" in found


def test_wrongly_typed_constraint_attr_is_an_error(db):
    with pytest.raises(KernelMatchError):
        db.op("MatMul").supported_device_types({"T": I(1)})


def test_missing_type_attr_is_an_error(db):
    with pytest.raises(KernelMatchError, match="'T'"):
        db.op("MatMul").find_kernel("CPU", {})


def test_real_nodedef_attr_map_is_not_mutated(db):
    node = NodeDef(name="c", op="ConcatV2")
    node.attr["N"].i = 2
    node.attr["T"].type = FLOAT
    concat = db.op("ConcatV2")
    assert concat.input_types(node.attr) == [FLOAT, FLOAT, INT32]  # Tidx defaults to int32
    assert concat.supported_device_types(node.attr)["GPU"] == 0
    assert set(node.attr) == {"N", "T"}


# --------------------------------------------------------------------------- arg types


def test_variablev2_output_is_float_ref(db):
    var = db.op("VariableV2")
    assert var.output_types({"dtype": T(FLOAT), "shape": AttrValue()}) == [FLOAT_REF]
    assert var.input_types({"dtype": T(FLOAT)}) == []
    assert var.is_stateful


def test_assign_input0_is_ref(db):
    assign = db.op("Assign")
    assert assign.input_types({"T": T(FLOAT)}) == [FLOAT_REF, FLOAT]
    assert assign.output_types({"T": T(FLOAT)}) == [FLOAT_REF]
    assert dtypes.is_ref(assign.input_types({"T": T(FLOAT)})[0])


def test_read_variable_op_input_is_resource(db):
    read = db.op("ReadVariableOp")
    assert read.input_types({"dtype": T(HALF)}) == [RESOURCE]
    assert read.output_types({"dtype": T(HALF)}) == [HALF]
    assert read.is_stateful


def test_addn_expands_number_attr(db):
    addn = db.op("AddN")
    assert addn.input_types({"N": I(3), "T": T(FLOAT)}) == [FLOAT] * 3
    assert addn.num_inputs({"N": I(3)}) == 3
    assert addn.num_outputs({"N": I(3)}) == 1
    assert not addn.is_stateful


def test_concatv2_n_plus_axis(db):
    concat = db.op("ConcatV2")
    attrs = {"N": I(4), "T": T(DOUBLE), "Tidx": T(INT64)}
    assert concat.input_types(attrs) == [DOUBLE] * 4 + [INT64]
    assert concat.input_ranges(attrs) == {"values": (0, 4), "axis": (4, 5)}


def test_identityn_list_type(db):
    ident = db.op("IdentityN")
    attrs = {"T": TL(FLOAT, INT32, STRING)}
    assert ident.input_types(attrs) == [FLOAT, INT32, STRING]
    assert ident.output_types(attrs) == [FLOAT, INT32, STRING]
    assert ident.num_outputs(attrs) == 3


def test_fixed_type_number_attr(db):
    # DynamicStitch: N int32 index tensors, then N data tensors of type T.
    stitch = db.op("DynamicStitch")
    assert stitch.input_types({"N": I(2), "T": T(FLOAT)}) == [INT32, INT32, FLOAT, FLOAT]


def test_unresolvable_types_give_none(db):
    assert db.op("AddN").input_types({"T": T(FLOAT)}) is None  # N missing, no default
    assert db.op("AddN").num_outputs({"N": I(2)}) == 1  # count needs only N
    assert db.op("MatMul").output_types({}) is None
    assert db.op("MatMul").output_types({"T": T(FLOAT_REF)}) is None  # type attrs are never refs
    assert db.op("IdentityN").num_outputs({}) is None
    assert db.op("AddN").num_inputs({"N": I(-1)}) is None
    assert db.op("AddN").input_types({"N": I(-1), "T": T(FLOAT)}) is None


def test_defaults_applied(db):
    shape = db.op("Shape")
    assert shape.output_types({"T": T(FLOAT)}) == [INT32]  # out_type defaults to int32
    assert shape.output_types({"T": T(FLOAT), "out_type": T(INT64)}) == [INT64]
    assert shape.attr_defs["out_type"].default == INT32


# --------------------------------------------------------------------------- host memory


def test_shape_output_in_host_memory_on_gpu(db):
    shape = db.op("Shape")
    assert shape.host_memory_outputs("GPU", {"T": T(FLOAT)}) == {0}
    assert shape.host_memory_inputs("GPU", {"T": T(FLOAT)}) == frozenset()
    # int32 input is a HostMemory arg of the int32 GPU kernel
    assert shape.host_memory_inputs("GPU", {"T": T(INT32)}) == {0}


def test_reshape_shape_input_in_host_memory_on_gpu(db):
    reshape = db.op("Reshape")
    assert reshape.host_memory_inputs("GPU", {"T": T(FLOAT)}) == {1}
    assert reshape.host_memory_outputs("GPU", {"T": T(FLOAT)}) == frozenset()


def test_default_kernel_host_memory_args(db):
    # int32 ConcatV2 on GPU runs the DEFAULT kernel with everything in host memory.
    concat = db.op("ConcatV2")
    attrs = {"N": I(2), "T": T(INT32)}
    assert concat.host_memory_inputs("GPU", attrs) == {0, 1, 2}
    assert concat.host_memory_outputs("GPU", attrs) == {0}
    assert concat.host_memory_inputs("GPU", {"N": I(2), "T": T(FLOAT)}) == {2}


def test_always_on_host_dtypes_and_int32_without_kernel(db):
    # Resource and string values are always in host memory.
    assert db.op("ReadVariableOp").host_memory_inputs("GPU", {"dtype": T(FLOAT)}) == {0}
    ident = db.op("IdentityN")
    assert ident.host_memory_inputs("GPU", {"T": TL(FLOAT, STRING)}) == {1}
    # A function call keeps int32 on host even though it has a kernel.
    call = db.op("StatefulPartitionedCall")
    attrs = {"Tin": TL(INT32, FLOAT), "Tout": TL(INT32), "f": AttrValue()}
    assert call.host_memory_inputs("GPU", attrs) == {0}
    assert call.host_memory_outputs("GPU", attrs) == {0}
    assert call.host_memory_inputs("TPU", attrs) == frozenset()  # TPU keeps int32 on device
    assert call.host_memory_inputs("GPU", {**attrs, "_XlaMustCompile": AttrValue(b=True)}) == frozenset()


def test_hostmem_attrs(db):
    ident = db.op("IdentityN")
    attrs = {"T": TL(FLOAT, FLOAT), "_input_hostmem": AttrValue(list=AttrValue.ListValue(i=[1, 7]))}
    assert ident.host_memory_inputs("GPU", attrs) == {1}


def test_memory_types_need_resolvable_args(db):
    with pytest.raises(OpDBError):
        db.op("AddN").host_memory_inputs("GPU", {"T": T(FLOAT)})


# --------------------------------------------------------------------------- dtypes


def test_dtype_helpers():
    assert dtypes.dtype_name(FLOAT) == "float32"
    assert dtypes.dtype_name(HALF) == "float16"
    assert dtypes.dtype_name(FLOAT_REF) == "float32_ref"
    assert dtypes.dtype_name(999).startswith("unknown")
    assert dtypes.dtype_size(FLOAT) == 4
    assert dtypes.dtype_size(HALF) == 2
    assert dtypes.dtype_size(18) == 16  # complex128
    assert dtypes.dtype_size(FLOAT_REF) == 4
    for no_size in (STRING, RESOURCE, VARIANT, 0, 999):
        assert dtypes.dtype_size(no_size) is None
    assert dtypes.is_ref(FLOAT_REF) and not dtypes.is_ref(FLOAT)
    assert dtypes.base_type(FLOAT_REF) == FLOAT and dtypes.base_type(FLOAT) == FLOAT
    assert dtypes.ref_type(FLOAT) == FLOAT_REF
    assert dtypes.dtype_enum("DT_BFLOAT16") == 14 == dtypes.dtype_enum("bfloat16")


def test_dtype_constants_match_generated_table():
    for const in ("DT_INVALID", "DT_FLOAT", "DT_INT32", "DT_STRING", "DT_RESOURCE", "DT_VARIANT",
                  "DT_INT64", "DT_UINT8", "DT_INT16", "DT_INT8", "DT_UINT16", "DT_UINT32",
                  "DT_UINT64"):
        assert dtypes.dtype_enum_name(getattr(dtypes, const)) == const
    assert dtypes.dtype_enum("DT_FLOAT_REF") == dtypes.DT_FLOAT + dtypes.REF_OFFSET


def test_opdb_does_not_import_tensorflow():
    code = (
        "import sys; from placelint.opdb import get_opdb; import placelint.dtypes as d; "
        "get_opdb().op('MatMul').supported_device_types({}, device_types=[]); d.dtype_name(1); "
        "assert not any(m == 'tensorflow' or m.startswith('tensorflow.') for m in sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
