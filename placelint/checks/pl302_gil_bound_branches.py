"""PL302 gil-bound-branches: parallel branches whose ops hold the Python GIL."""

from ..diagnostics import Severity
from ..humanize import list_names
from .base import Rule


class GilBoundBranches(Rule):
    code = "PL302"
    name = "gil-bound-branches"
    severity = Severity.WARNING
    summary = ("Independent branches are made of Python ops (tf.py_function / tf.numpy_function); "
               "their Python code holds the GIL, so it runs one at a time whatever inter_op says.")
    per_step = True

    def check(self, ctx):
        p = ctx.parallelism
        if p.gil_width < 2:
            return
        names = [n for b in p.gil_branches for n in b.ops]
        scopes = [b.scope for b in p.gil_branches]
        yield self.diag(
            f"{p.gil_width} Python ops could run side by side ({list_names(names)}, in "
            f"{list_names(scopes)}), but PyFunc/EagerPyFunc kernels take the Python GIL to run "
            "their body (tensorflow/python/lib/core/py_func.cc): pure-Python code in them runs one "
            "at a time whatever inter_op_parallelism_threads says, and only what releases the GIL "
            "(numpy calls, I/O) overlaps.",
            fix="write these branches with TensorFlow ops (or tf.function-traced code) so they "
                "can run in parallel, or move the Python work out of the graph (e.g. into "
                "tf.data with its own workers); while they stay, keep inter_op_parallelism_threads "
                f"at {min(p.gil_width, p.cores)} or more (the branches, at most one thread per "
                "target core) so that bodies which release the GIL can overlap.",
            nodes=names)


RULE = GilBoundBranches
