"""A node without a name: TensorFlow refuses the graph ("Node '': Node name contains
invalid characters"), placelint says so (PL005) and never takes a call without a name for
the top level (an empty call site means the top level to the builder)."""

from __future__ import annotations

import pytest
from google.protobuf import text_format

import placelint
from placelint.proto import GraphDef

PLACEHOLDER = 'node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }\n'
LIBRARY = """
library { function {
  signature { name: "f" input_arg { name: "x" type: DT_FLOAT } output_arg { name: "y" type: DT_FLOAT } }
  node_def { name: "n0" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  ret { key: "y" value: "n0:output:0" } } }
"""


@pytest.mark.parametrize("node", [
    'node { op: "Identity" input: "a" attr { key: "T" value { type: DT_FLOAT } } }',
    'node { op: "f" input: "a" }',      # a call of a library function, by its name
    'node { op: "PartitionedCall" input: "a" attr { key: "f" value { func { name: "f" } } }'
    ' attr { key: "Tin" value { list { type: DT_FLOAT } } }'
    ' attr { key: "Tout" value { list { type: DT_FLOAT } } } }',
    'node { op: "If" input: "a" input: "a" attr { key: "Tcond" value { type: DT_FLOAT } }'
    ' attr { key: "then_branch" value { func { name: "f" } } }'
    ' attr { key: "else_branch" value { func { name: "f" } } }'
    ' attr { key: "Tin" value { list { type: DT_FLOAT } } }'
    ' attr { key: "Tout" value { list { type: DT_FLOAT } } } }',
])
def test_a_node_without_a_name_is_pl005_not_an_internal_error(node):
    gd = text_format.Parse(PLACEHOLDER + node + LIBRARY, GraphDef())
    report = placelint.analyze(gd, devices="CPU=1")
    codes = [d.code for d in report.findings]
    assert "PL009" not in codes
    unnamed = [d for d in report.findings if d.code == "PL005" and "has no name" in d.message]
    assert len(unnamed) == 1
    assert "Node '': Node name contains invalid characters" in unnamed[0].message
