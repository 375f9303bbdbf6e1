"""Is a file that is not a readable model a *different* kind of protobuf file?

Model directories hold other protobuf files next to the graphs: object-detection label
maps (``label_map.pbtxt``), TF Serving configs (``models.config``), training pipeline
configs, ``tf.train.Example`` fixtures (``.pb``). They are well-formed, just not models.
When such a file is found by a directory walk (or passed by pre-commit) it is skipped with a
note; named on the command line it is a PL001 error. This module decides, without a schema:

- **text**: the whole file is syntactically valid protobuf text format (fields, nested
  messages, lists, comments; checked by ``text_fields``), and none of its top-level field
  names is a field of GraphDef, MetaGraphDef or SavedModel. A text file whose first field
  is ``node`` that does not parse is a broken GraphDef, never "not a model"; so is prose.
- **binary**: the bytes are a well-formed protobuf wire-format message at the top level
  (every tag valid, every length inside the file, the last field ending exactly at the end
  of the file: a truncated or corrupt model fails this), and read as a GraphDef it holds
  nothing of a graph: no node with a name and an op name, no named function (the caller
  has already found that it is no MetaGraphDef or SavedModel either).

Both are linear in the file size and never recurse.
"""

from __future__ import annotations

import re

from ..proto import GraphDef, MetaGraphDef, SavedModel
from ..wire import fields as wire_fields

#: every top-level field name of the three model messages (from their descriptors)
MODEL_FIELDS = frozenset(f.name for cls in (GraphDef, MetaGraphDef, SavedModel)
                         for f in cls.DESCRIPTOR.fields)

#: top-level field names of protobuf files often found beside models -> what they are
#: (object_detection/protos/string_int_label_map.proto, pipeline.proto;
#: tensorflow_serving/config/model_server_config.proto; tensorflow/core/example/*.proto)
KNOWN_FILES = {
    "item": "an object-detection label map (StringIntLabelMap)",
    "model": "an object-detection pipeline config (TrainEvalPipelineConfig)",
    "model_config_list": "a TF Serving model config (ModelServerConfig)",
    "custom_model_config": "a TF Serving model config (ModelServerConfig)",
    "train_config": "an object-detection pipeline config (TrainEvalPipelineConfig)",
    "train_input_reader": "an object-detection pipeline config (TrainEvalPipelineConfig)",
    "eval_config": "an object-detection pipeline config (TrainEvalPipelineConfig)",
    "eval_input_reader": "an object-detection pipeline config (TrainEvalPipelineConfig)",
    "features": "a tf.train.Example",
    "feature_lists": "a tf.train.SequenceExample",
}

_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\n\f\v]+|\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<number>-?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fF]?))
  | (?P<ident>-?[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[{}<>\[\]:;,./])
""", re.X)


def _tokens(text: str):
    pos, end = 0, len(text)
    while pos < end:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(pos)
        pos = m.end()
        kind = m.lastgroup
        if kind != "space":
            yield kind, m.group()


def text_fields(text: str) -> list[str] | None:
    """The top-level field names of a protobuf text-format message, in order, without
    duplicates; None when ``text`` is not valid text format (syntax only: any names)."""
    toks = _tokens_or_none(text)
    if toks is None:
        return None
    n = len(toks)
    i = 0
    #: what each open context waits for: "}" or ">" (a message), "]" (a list of messages)
    stack: list[str] = []
    top: list[str] = []

    def after_value(i: int) -> int:
        return i + 1 if i < n and toks[i][1] in (";", ",") else i

    def scalar_end(i: int) -> int | None:
        """Past one scalar value at ``toks[i]`` (adjacent strings concatenate)."""
        if i >= n:
            return None
        kind = toks[i][0]
        if kind == "string":
            while i < n and toks[i][0] == "string":
                i += 1
            return i
        return i + 1 if kind in ("number", "ident") else None

    def name_end(i: int) -> int | None:
        kind, tok = toks[i]
        if kind == "ident" and not tok.startswith("-"):
            return i + 1
        if tok == "[":              # [extension.name] or [type.googleapis.com/pkg.Type]
            j = i + 1
            while j < n and toks[j][0] == "ident" or j < n and toks[j][1] in "./":
                j += 1
            return j + 1 if j > i + 1 and j < n and toks[j][1] == "]" else None
        return None

    while True:
        if stack and stack[-1] == "]":          # in a list of messages
            if i < n and toks[i][1] in ("{", "<"):
                stack.append("}" if toks[i][1] == "{" else ">")
                i += 1
                continue
            return None
        if i >= n:
            break
        kind, tok = toks[i]
        if tok in ("}", ">"):
            if not stack or stack.pop() != tok:
                return None
            i += 1
            if stack and stack[-1] == "]":      # the message was an item of a list
                if i < n and toks[i][1] == ",":
                    i += 1
                    continue
                if i < n and toks[i][1] == "]":
                    stack.pop()
                    i += 1
                else:
                    return None
            i = after_value(i)
            continue
        j = name_end(i)
        if j is None:
            return None
        if not stack and tok not in top:
            top.append(tok)
        i = j
        colon = i < n and toks[i][1] == ":"
        i += colon
        if i >= n:
            return None
        tok = toks[i][1]
        if tok in ("{", "<"):
            stack.append("}" if tok == "{" else ">")
            i += 1
            continue
        if tok == "[":
            i += 1
            if i < n and toks[i][1] == "]":
                i = after_value(i + 1)
                continue
            if i < n and toks[i][1] in ("{", "<"):
                stack.append("]")
                continue
            if not colon:
                return None         # a list of scalars needs a colon
            while True:             # a list of scalars
                k = scalar_end(i)
                if k is None:
                    return None
                i = k
                if i < n and toks[i][1] == ",":
                    i += 1
                    continue
                if i < n and toks[i][1] == "]":
                    i += 1
                    break
                return None
            i = after_value(i)
            continue
        if not colon:
            return None             # `name value` needs a colon
        k = scalar_end(i)
        if k is None:
            return None
        i = after_value(k)
    return None if stack else top


def _tokens_or_none(text: str):
    try:
        return list(_tokens(text))
    except ValueError:
        return None


def is_text_of_other_message(text: str) -> tuple[bool, list[str]]:
    """(True, fields) when ``text`` is valid text format whose top-level fields are not a
    model's; (False, fields or []) otherwise."""
    fields = text_fields(text)
    if not fields:
        return False, fields or []
    return not (set(fields) & MODEL_FIELDS), fields


def describe_text(fields: list[str]) -> str:
    """``not a TensorFlow model: ...`` for a text file with these top-level fields."""
    known = next((KNOWN_FILES[f] for f in fields if f in KNOWN_FILES), None)
    shown = ", ".join(fields[:4]) + (", ..." if len(fields) > 4 else "")
    what = f", perhaps {known}" if known else ""
    return (f"not a TensorFlow model: a text-format protobuf of another kind{what}; its "
            f"top-level fields ({shown}) are none of a GraphDef's, MetaGraphDef's or "
            "SavedModel's")


# -- binary ---------------------------------------------------------------------------

_OP_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_>]*\Z")

#: (field number, wire type) at the top level of each model message
_MODEL_SHAPES = (
    {(1, 2), (2, 2), (3, 0), (4, 2), (5, 2)},                # GraphDef
    {(k, 2) for k in range(1, 8)},                           # MetaGraphDef
    {(1, 0), (2, 2)},                                        # SavedModel
)


def is_binary_of_other_message(data: bytes) -> bool:
    """Well-formed wire format that holds nothing of a model (see the module doc)."""
    if not data:
        return False
    top = wire_fields(data)
    if top is None:
        return False
    if looks_like_example(data):
        return True
    g = GraphDef()
    try:
        g.ParseFromString(data)
    except Exception:  # noqa: BLE001 - a decode failure deeper down
        # corrupt inside a field: a damaged model when its top level has a model's shape
        fields = {(num, wt) for num, wt, *_ in top}
        return not any(fields <= shape for shape in _MODEL_SHAPES)
    if any(node.name and _OP_NAME.match(node.op) for node in g.node):
        return False
    if any(f.signature.name for f in g.library.function):
        return False
    # an empty GraphDef (versions only, nothing unknown) is a graph, not another message
    from google.protobuf.unknown_fields import UnknownFieldSet
    return bool(g.node) or len(UnknownFieldSet(g)) > 0


def looks_like_example(data: bytes) -> bool:
    """The wire shape of a ``tf.train.Example``: one field 1 (Features) holding map entries
    {1: key, 2: Feature with one of bytes_list/float_list/int64_list}."""
    top = wire_fields(data)
    if not top or any(num != 1 or wt != 2 for num, wt, *_ in top):
        return False
    for *_, s, e in top:
        features = data[s:e]
        entries = wire_fields(features)
        if not entries or any(num != 1 or wt != 2 for num, wt, *_ in entries):
            return False
        for *_, es, ee in entries:
            entry = features[es:ee]
            kv = wire_fields(entry)
            if not kv or {(num, wt) for num, wt, *_ in kv} != {(1, 2), (2, 2)}:
                return False
            feature = next(entry[vs:ve] for num, *_, vs, ve in kv if num == 2)
            parts = wire_fields(feature)
            if parts is None or len(parts) > 1 or any((num, wt) not in {(1, 2), (2, 2), (3, 2)}
                                                      for num, wt, *_ in parts):
                return False
    return True


def describe_binary(data: bytes) -> str:
    what = f", perhaps {KNOWN_FILES['features']}" if looks_like_example(data) else ""
    return (f"not a TensorFlow model: a binary protobuf of another kind{what}; its fields "
            "are none of a GraphDef's, MetaGraphDef's or SavedModel's")
