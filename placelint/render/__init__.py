"""Drawing an analysed graph: ``placelint graph PATH -o out.svg``.

Three layers, each usable alone:

* ``view``: graph + analyses -> a ``View`` (which nodes, collapsed scopes and edges to
  draw). Pure Python and deterministic: scope collapsing under ``--max-nodes``, hidden
  cheap nodes, hub extraction, ``--focus``.
* ``dot``: ``View`` -> DOT source text (generated ids, escaping, colours, legend).
* ``run_dot``: runs Graphviz ``dot`` with a time limit, falling back to cheaper layouts.
"""
