"""Write the seed corpus (tests/fuzz/seeds): small valid and hostile models in every format.

    python tests/fuzz/make_seeds.py

Deterministic; the output is committed. Seeds are kept small (a few KiB) so mutations hit
structure, not bulk.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from google.protobuf import text_format

from placelint.proto import GraphDef, MetaGraphDef, SavedModel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OUT = HERE / "seeds"

FUNCS = '''
node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } } }
node { name: "call" op: "StatefulPartitionedCall" input: "p" device: "/device:GPU:0"
  attr { key: "f" value { func { name: "body" } } }
  attr { key: "Tin" value { list { type: DT_FLOAT } } }
  attr { key: "Tout" value { list { type: DT_FLOAT } } } }
node { name: "if" op: "If" input: "b" input: "call"
  attr { key: "Tcond" value { type: DT_BOOL } }
  attr { key: "then_branch" value { func { name: "body" } } }
  attr { key: "else_branch" value { func { name: "body" } } }
  attr { key: "Tin" value { list { type: DT_FLOAT } } }
  attr { key: "Tout" value { list { type: DT_FLOAT } } } }
node { name: "w" op: "While" input: "if"
  attr { key: "T" value { list { type: DT_FLOAT } } }
  attr { key: "cond" value { func { name: "cond" } } }
  attr { key: "body" value { func { name: "body" } } } }
node { name: "v" op: "VarHandleOp" device: "/device:CPU:0"
  attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { } } } }
node { name: "r" op: "ReadVariableOp" input: "v" input: "^w" device: "/device:GPU:0"
  attr { key: "dtype" value { type: DT_FLOAT } } }
library {
  function { signature { name: "body" input_arg { name: "x" type: DT_FLOAT }
                         output_arg { name: "y" type: DT_FLOAT } }
    node_def { name: "sq" op: "Square" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node_def { name: "id" op: "IdentityN" input: "sq:y:0"
      attr { key: "T" value { list { type: DT_FLOAT } } } }
    ret { key: "y" value: "id:output:0" } }
  function { signature { name: "cond" input_arg { name: "x" type: DT_FLOAT }
                         output_arg { name: "c" type: DT_BOOL } }
    node_def { name: "k" op: "Const" attr { key: "dtype" value { type: DT_BOOL } }
      attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape { } bool_val: true } } } }
    ret { key: "c" value: "k:output:0" } }
}
versions { producer: 1994 }
'''

SHAPES = '''
node { name: "c" op: "Const" device: "/device:CPU:0"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 4611686018427387904 } dim { size: 3 } } } } }
  attr { key: "_output_shapes" value { list { shape { dim { size: -1 } dim { size: 3 } } } } } }
node { name: "m" op: "MatMul" input: "c" input: "c" device: "/device:GPU:0"
  attr { key: "T" value { type: DT_FLOAT } } }
node { name: "s" op: "Shape" input: "m" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "cls" op: "Identity" input: "s" device: "/device:GPU:1"
  attr { key: "T" value { type: DT_INT32 } }
  attr { key: "_class" value { list { s: "loc:@c" } } } }
'''


def main():
    OUT.mkdir(exist_ok=True)
    for old in OUT.iterdir():
        old.unlink()
    samples = ROOT / "samples"
    for name in ("while_loop_v1.meta", "towers_gpu.pb", "py_function_branches.pbtxt",
                 "cpu_vars_gpu_ops.pbtxt"):
        shutil.copy(samples / name, OUT / name)
    (OUT / "functions.pbtxt").write_text(FUNCS.lstrip())
    gd = text_format.Parse(FUNCS, GraphDef())
    (OUT / "functions.pb").write_bytes(gd.SerializeToString())
    (OUT / "shapes_colocation.pbtxt").write_text(SHAPES.lstrip())
    meta = MetaGraphDef()
    meta.graph_def.CopyFrom(gd)
    meta.meta_info_def.tags.append("serve")
    meta.signature_def["serving_default"].outputs["out"].name = "r:0"
    sm = SavedModel(saved_model_schema_version=1)
    sm.meta_graphs.add().CopyFrom(meta)
    (OUT / "savedmodel_binary.pb").write_bytes(sm.SerializeToString())
    (OUT / "meta.meta").write_text(text_format.MessageToString(meta))
    # a few hostile ones from the corpus (small)
    import sys
    sys.path.insert(0, str(HERE.parent))
    from hostile.corpus import CASES
    import tempfile
    keep = {"cycle", "exit_without_enter", "mutual_recursion", "if_reaches_itself",
            "control_before_data", "bad_output_index", "odd_name_control_with_index",
            "lfs_pointer", "deep_binary"}
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            if case.name in keep:
                d = Path(tmp) / case.name
                d.mkdir()
                src = case.make(d)
                shutil.copy(src, OUT / f"hostile_{case.name}{src.suffix}")
    for p in sorted(OUT.iterdir()):
        print(f"{p.stat().st_size:8d} {p.name}")


if __name__ == "__main__":
    main()
