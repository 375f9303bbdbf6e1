"""The fast text-format reader gives exactly what protobuf's text_format gives, or steps aside.

``placelint/loaders/fast_text.py`` turns text into wire format itself; whenever it returns
True the message must equal ``text_format.Parse``'s (compared as deterministic bytes), and
whenever text_format refuses a text the fast reader must refuse it too (the loader then
runs text_format, which reports the error).
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest
from google.protobuf import text_format

from placelint.loaders import fast_text
from placelint.proto import GraphDef, MetaGraphDef, SavedModel

ROOT = Path(__file__).resolve().parent.parent
TEXT_FILES = sorted(p for p in ROOT.glob("**/*.pbtxt") if ".venv" not in p.parts)


def _reference(text: str, cls):
    msg = cls()
    try:
        text_format.Parse(text, msg, allow_unknown_field=False, max_recursion_depth=100)
    except (text_format.ParseError, ValueError, UnicodeError, RecursionError):
        return None
    return msg.SerializeToString(deterministic=True)


def _fast(text: str, cls):
    msg = cls()
    ok = fast_text.parse(text, msg)
    if not ok:
        assert msg.ByteSize() == 0          # left empty for text_format
        return None
    return msg.SerializeToString(deterministic=True)


def _kind(text: str):
    from placelint.loaders.read import _CLASSES, _text_kind
    return _CLASSES[_text_kind(text) or "graphdef"]


def test_there_are_text_files_to_compare():
    assert len(TEXT_FILES) > 20


@pytest.mark.parametrize("path", TEXT_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_same_message_as_text_format(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    cls = _kind(text)
    fast = _fast(text, cls)
    ref = _reference(text, cls)
    if fast is not None:
        assert fast == ref
    # the repository's own files are all in the subset
    assert ref is None or fast is not None, "fell back on a plain file"


def test_generated_towers_graph_is_read_fast_and_the_same():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_graphs import make_towers
    text = text_format.MessageToString(make_towers(2000))
    fast = _fast(text, GraphDef)
    assert fast is not None and fast == _reference(text, GraphDef)


CASES = [
    'node { name: "a" op: "Const" }',
    'node { name: "a" name: "b" }',                              # singular twice: error
    'node { name: "a" attr { key: "T" value { type: DT_FLOAT } } }',
    'node { attr { key: "T" value { type: DT_FLOAT i: 3 } } }',  # two oneof members: error
    'node { attr { key: "x" value { i: -5 } } }',
    'node { attr { key: "x" value { i: 0x10 } } }',
    'node { attr { key: "x" value { i: 010 } } }',               # octal, as text_format
    'node { attr { key: "x" value { i: 99999999999999999999 } } }',   # out of range
    'node { attr { key: "x" value { f: 1.5f } } }',
    'node { attr { key: "x" value { f: -inf } } }',
    'node { attr { key: "x" value { f: nan } } }',
    'node { attr { key: "x" value { f: 1e39 } } }',
    'node { attr { key: "x" value { b: t } } }',
    'node { attr { key: "x" value { b: yes } } }',
    'node { attr { key: "x" value { type: 1 } } }',
    'node { attr { key: "x" value { type: DT_NOPE } } }',
    'node { attr { key: "x" value { s: "a\\nb\\x41\\101" "more" } } }',
    "node { attr { key: 'x' value { s: 'single' } } }",
    'node { attr { key: "x" value { s: "\\xff" } } }',             # bytes field: fine
    'node { name: "\\xff" }',                                    # invalid UTF-8 string
    'node { attr { key: "x" value { list { i: [1, 2, 3] } } } }',  # list syntax: fallback
    'node < name: "a" >',                                        # angle brackets
    'node { name: "a" }, node { name: "b" }',                    # separators
    'node { name: "a" } # comment "quoted" {\n node { name: "b" }',
    'node: { name: "a" }',
    'node { name "a" }',                                         # missing colon: error
    'node { name: }',
    'node { name: "a" ',                                         # unclosed
    'node { name: "a" } }',                                      # unbalanced
    'nodes { name: "a" }',                                       # unknown field
    'node { name: "unterminated }',
    'node { name: "a" op: "b" device: "" input: "x" input: "^y" }',
    'node { name: abc }',                                        # unquoted string: error
    'node { attr { key: "x" value { s: 12 } } }',                # unquoted bytes: error
    'node { name: "a" "b" }',                                    # adjacent strings
    'versions { producer: 27 min_consumer: -1 }',
    'node { attr { key: "x" value { shape { dim { size: -1 } unknown_rank: true } } } }',
    'node { attr { key: "x" value { i: ١٢ } } }',                 # Unicode digits
    'node\u00a0{ name: "a" }',                                   # Unicode space
    'node { attr { key: "x" value { f: 1_0.5 } } }',
    'library { function { signature { name: "f" } node_def { name: "n" op: "Add" } } }',
    '',
    '# only a comment',
]


@pytest.mark.parametrize("text", CASES)
def test_cases(text):
    fast = _fast(text, GraphDef)
    ref = _reference(text, GraphDef)
    if fast is not None:
        assert fast == ref
    else:
        # outside the subset: list syntax, <>, separators, Unicode spaces, float overflow
        assert ref is None or any(m in text for m in ("[", "<", ",", "\u00a0", "1e39")), \
            "fell back on text in the subset"


def test_metagraph_and_saved_model_text():
    meta = 'meta_info_def { tags: "serve" } graph_def { node { name: "a" op: "NoOp" } }'
    assert _fast(meta, MetaGraphDef) == _reference(meta, MetaGraphDef) is not None
    saved = f"saved_model_schema_version: 1 meta_graphs {{ {meta} }}"
    assert _fast(saved, SavedModel) == _reference(saved, SavedModel) is not None


@pytest.mark.filterwarnings("ignore::DeprecationWarning")    # CUnescape on odd escapes
def test_random_mutations_never_disagree():
    """Byte-level edits of a real file: when both readers accept, they agree, and the fast
    reader never accepts what text_format refuses."""
    base = (ROOT / "samples" / "cpu_vars_gpu_ops.pbtxt").read_text()
    rng = random.Random(0)
    alphabet = ' \n{}:"\'#\\<>[],;0123456789-.exfnatrueDT_FLOAT_a'
    for _ in range(2000):
        text = list(base)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(text))
            op = rng.random()
            if op < 0.4:
                text[pos] = rng.choice(alphabet)
            elif op < 0.7:
                del text[pos]
            else:
                text.insert(pos, rng.choice(alphabet))
        text = "".join(text)
        fast = _fast(text, GraphDef)
        if fast is not None:
            assert fast == _reference(text, GraphDef), text


_TOK = re.compile(r"""\s+|#[^\n]*|"(?:[^"\n\\]|\\.)*"|'(?:[^'\n\\]|\\.)*'|[\w.+-]+|\S""")
_EXTRA = ['"x"', "'y'", "5", "-1", "1.5", "abc", "DT_FLOAT", "true", "{", "}", ":", "node",
          "name", "attr", "key", "value", "list", "i", "s", "f", "b", "type", "shape", "dim",
          "#c\n", '"\\x41"', "0x10", "010", "inf", "nan", "[", "]", ",", "<", '""']


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_random_token_edits_never_disagree():
    """Token-level edits (delete, insert, replace, duplicate a run) of the repository's
    text files: the fast reader accepts only what text_format accepts, and reads it the same."""
    rng = random.Random(7)
    for _ in range(1500):
        tokens = _TOK.findall(rng.choice(TEXT_FILES).read_text(errors="replace")[:20000])
        words = [t for t in tokens if not t.isspace()]
        for _ in range(rng.randint(1, 4)):
            j, op = rng.randrange(len(tokens)), rng.random()
            if op < 0.25:
                del tokens[j]
            elif op < 0.5:
                tokens.insert(j, f" {rng.choice(words + _EXTRA)} ")
            elif op < 0.75:
                tokens[j] = f" {rng.choice(words + _EXTRA)} "
            else:
                tokens[j:j] = tokens[j:j + rng.randint(1, 20)]
        text = "".join(tokens)
        cls = _kind(text)
        fast = _fast(text, cls)
        if fast is not None:
            assert fast == _reference(text, cls), text[:500]
