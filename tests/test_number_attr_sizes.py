"""A number attr (``N``, ``num``) sizes an op's argument: one that no int32 holds is
refused as TensorFlow refuses it (AddArgToSig: "Number of outputs is too big: N"), and no
value makes placelint build a list that long (2**62 was a MemoryError, PL009; 2**31 - 1
took 24 GB)."""

from __future__ import annotations

import pytest
from google.protobuf import text_format

import placelint
from placelint.model.function_validation import check_function
from placelint.opdb import get_opdb
from placelint.opdb.arg_types import MAX_ARG_COUNT
from placelint.proto import FunctionDef, GraphDef

PLACEHOLDER = 'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }\n'


def _analyze(node: str):
    gd = text_format.Parse(PLACEHOLDER + node, GraphDef())
    return placelint.analyze(gd, devices="CPU=1").findings


@pytest.mark.parametrize("n", [2**31, 2**62, 2**63 - 1])
@pytest.mark.parametrize("op, attr, inputs", [("AddN", "N", 'input: "x" input: "x"'),
                                              ("Unpack", "num", 'input: "x"')])
def test_a_number_attr_over_int32_is_tfs_refusal(op, attr, inputs, n):
    findings = _analyze(f'node {{ name: "y" op: "{op}" {inputs} '
                        f'attr {{ key: "T" value {{ type: DT_FLOAT }} }} '
                        f'attr {{ key: "{attr}" value {{ i: {n} }} }} }}')
    assert [(d.code, d.node, d.message.split(" (")[0]) for d in findings] == [
        ("PL007", "y", f"Number of outputs is too big: {n}")]


@pytest.mark.parametrize("n", [MAX_ARG_COUNT + 1, 2**31 - 1])
def test_a_number_attr_too_big_to_expand_leaves_the_dtypes_unknown(n):
    """Within int32 TF would try (it takes ~5 GB for 10^7 outputs): placelint does not
    build the list, the node's dtypes are unknown, and nothing fails."""
    findings = _analyze(f'node {{ name: "y" op: "Unpack" input: "x" '
                        f'attr {{ key: "T" value {{ type: DT_FLOAT }} }} '
                        f'attr {{ key: "num" value {{ i: {n} }} }} }}')
    assert not [d for d in findings if d.code == "PL009"]


def test_a_function_body_node_with_a_huge_number_attr_is_not_expanded():
    fdef = text_format.Parse("""
signature { name: "f" input_arg { name: "a" type: DT_FLOAT } }
node_def { name: "s" op: "AddN" input: "a" input: "a"
  attr { key: "T" value { type: DT_FLOAT } } attr { key: "N" value { i: 4611686018427387904 } } }
""", FunctionDef())
    assert check_function(fdef, get_opdb(), {}) == []


def test_an_input_count_mismatch_of_a_large_n_has_a_bounded_message():
    """TF's "NodeDef expected inputs '...'" lists every dtype: 100000 of them made a
    700 KB message; past MAX_LISTED_INPUTS it says how many."""
    from placelint.model.nodedef_validation import MAX_LISTED_INPUTS
    [d] = _analyze('node { name: "y" op: "AddN" input: "x" input: "x" '
                   'attr { key: "T" value { type: DT_FLOAT } } attr { key: "N" value { i: 100000 } } }')
    assert d.code == "PL007" and len(d.message) < 2000
    assert d.message.startswith("NodeDef expected inputs '" + "float, " * MAX_LISTED_INPUTS
                                + "... (100000 in all)' do not match 2 inputs specified; ")


@pytest.mark.parametrize("n", [MAX_ARG_COUNT + 1, 2**31 - 1])
def test_an_input_count_too_big_to_expand_is_still_checked(n):
    """TF refuses a node whose inputs are fewer than its number attr says, however large
    (ValidateNodeDef): placelint counts them without building the dtype list."""
    from placelint.model.nodedef_validation import MAX_LISTED_INPUTS
    [d] = _analyze(f'node {{ name: "y" op: "AddN" input: "x" input: "x" '
                   f'attr {{ key: "T" value {{ type: DT_FLOAT }} }} attr {{ key: "N" value {{ i: {n} }} }} }}')
    assert (d.code, d.node) == ("PL007", "y")
    assert d.message.startswith("NodeDef expected inputs '" + "float, " * MAX_LISTED_INPUTS
                                + f"... ({n} in all)' do not match 2 inputs specified; ")


def test_arg_count_types_ref_args_once():
    """``arg_count`` counts and types args as ``arg_types`` does, a ref arg's dtype made a
    ref type once, whether sized by a number attr or not."""
    from placelint.opdb.arg_types import ArgDef, arg_count, arg_types
    from placelint.proto import AttrValue
    from placelint.dtypes import REF_OFFSET
    attrs = {"T": AttrValue(type=1), "N": AttrValue(i=3)}
    args = (ArgDef("r", type=1, is_ref=True), ArgDef("xs", type_attr="T", number_attr="N", is_ref=True),
            ArgDef("y", type_attr="T"))
    expected = arg_types(args, attrs.get)
    assert expected == [1 + REF_OFFSET] * 4 + [1]
    assert arg_count(args, attrs.get, 32) == (5, expected)
    assert arg_count(args, attrs.get, 2) == (5, expected[:2])
    attrs["N"] = AttrValue(i=MAX_ARG_COUNT + 1)     # too large for arg_types: counted only
    assert arg_types(args, attrs.get) is None
    assert arg_count(args, attrs.get, 3) == (MAX_ARG_COUNT + 3, [1 + REF_OFFSET] * 3)
