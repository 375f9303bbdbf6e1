"""Names whose index is a digit to ``str.isdigit`` but not to ``int()`` ('²', '٣'): read as
TensorFlow reads them (ASCII digits only), never an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import text_format

import placelint
from placelint.model.step import tensor_name
from placelint.proto import GraphDef
from tests.checkrun import invoke

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("text, parsed", [
    ("x:1", ("x", 1)), ("x:²", ("x:²", 0)), ("x:٣", ("x:٣", 0)), ("^x", ("x", -1)),
])
def test_tensor_name_reads_ascii_indexes_only(text, parsed):
    assert tensor_name(text) == parsed


def test_a_fetch_with_a_superscript_index_is_not_found_rather_than_a_crash():
    r = invoke(["check", ROOT / "samples/towers_gpu.pb", "--fetch", "input:²"])
    codes = r.codes()
    assert "PL009" not in codes and "PL006" in codes
    assert "input:²" in r.stdout


def test_a_body_input_with_a_superscript_index_is_no_crash():
    """A function body reading ``a:output:²``: a malformed input (PL005, TF's "Unknown
    input node"), as any unreadable body input; not an internal error."""
    gd = text_format.Parse("""
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "call" op: "PartitionedCall" input: "x"
  attr { key: "f" value { func { name: "f" } } }
  attr { key: "Tin" value { list { type: DT_FLOAT } } }
  attr { key: "Tout" value { list { type: DT_FLOAT } } } }
library { function {
  signature { name: "f" input_arg { name: "i" type: DT_FLOAT } output_arg { name: "o" type: DT_FLOAT } }
  node_def { name: "a" op: "Identity" input: "i" attr { key: "T" value { type: DT_FLOAT } } }
  node_def { name: "b" op: "Identity" input: "a:output:²" attr { key: "T" value { type: DT_FLOAT } } }
  ret { key: "o" value: "b:output:0" } } }
""", GraphDef())
    report = placelint.analyze(gd, devices="CPU=1")
    assert [(d.code, d.node) for d in report.findings] == [("PL005", "call/b")]
    assert "malformed input name(s) 'a:output:²'" in report.findings[0].message
