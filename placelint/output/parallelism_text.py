"""Plain-text rendering of a ``ParallelismReport`` (``placelint parallelism``): the analysis
only computes, this module words it."""

from __future__ import annotations

from ..humanize import list_names

MAX_ROWS = 15
MAX_PATH = 8


def _n(x: int) -> str:
    """Large op counts in engineering style: 1.23e9."""
    return f"{x:,}" if x < 10_000_000 else f"{x:.3g}"


def _us(x: float) -> str:
    return f"{x:,.0f} us" if x >= 100 else f"{x:.3g} us"


def render(report) -> str:
    r = report
    out = [f"model: {r.model}", "", "inter-op parallelism"]
    out.append(f"  width {r.width} among {r.expensive_ops} expensive ops "
               f"({r.nodes} nodes; every node: {r.width_all_ops}; "
               f"without control edges: {r.width_without_control_edges})")
    out.append(f"  useful width {r.useful_width} among {r.useful_ops} ops estimated above the executor's "
               f"inline threshold ({r.threshold_us:g} us; smaller kernels run inline)")
    if r.useful_width >= 2 and r.useful_branches:
        out.append("  ops worth a thread that can run side by side (by name scope):")
        for b in r.useful_branches[:MAX_ROWS]:
            out.append(f"    {b.scope}: {list_names(b.ops, 6)}")
        if len(r.useful_branches) > MAX_ROWS:
            out.append(f"    ... and {len(r.useful_branches) - MAX_ROWS} more scopes")
    if r.folded_ops:
        out.append(f"  {r.folded_ops} op(s) are constant-folded by Grappler before the graph runs")
    same = [b.ops for b in r.branches] == [b.ops for b in r.useful_branches]
    if r.width >= 2 and r.branches and not same:
        out.append("  ops that can run side by side (one maximum antichain, by name scope):")
        for b in r.branches[:MAX_ROWS]:
            out.append(f"    {b.scope}: {list_names(b.ops, 6)}")
        if len(r.branches) > MAX_ROWS:
            out.append(f"    ... and {len(r.branches) - MAX_ROWS} more scopes")
    avg = f"{r.average_parallelism:.2f}" if r.average_parallelism is not None else "n/a"
    out.append(f"  estimated work T1 {_us(r.work_us)}, span Tinf {_us(r.span_us)}, average parallelism "
               f"T1/Tinf {avg} (Grappler op counts: work {_n(r.work)}, span {_n(r.span)})")
    if r.assumed_ops:
        out.append(f"  sizes: {r.assumed_ops} op(s) with unknown dims costed at batch size {r.batch_size}; "
                   f"{r.assumed_share:.0%} of the estimated time rests on assumed sizes")
    if r.critical_path:
        path = r.critical_path
        shown = path if len(path) <= MAX_PATH else path[:MAX_PATH // 2] + ["..."] + path[-MAX_PATH // 2:]
        out.append(f"  critical path ({len(path)} expensive ops): {' -> '.join(shown)}")
    if r.gil_width >= 2:
        out.append(f"  {r.gil_width} Python ops could run side by side; their Python code holds the GIL "
                   "(only what releases it, numpy or I/O, overlaps): "
                   + "; ".join(f"{b.scope}: {list_names(b.ops, 3)}" for b in r.gil_branches[:5]))
    if r.control_edges:
        hubs = ", ".join(f"{name} ({k})" for name, k in r.control_hubs)
        out.append(f"  {r.control_edges} control edge(s); most connected: {hubs}")
    if r.per_device:
        out.append("  per device:")
        for d in r.per_device:
            extra = " (kernels run inline: inter-op threads do not run them)" if d.inline_kernels else ""
            out.append(f"    {d.device}: width {d.width}, {d.expensive_ops} expensive of {d.ops} ops, "
                       f"work {_n(d.work)}{extra}")
    out += ["", f"intra-op parallelism ({r.cores} cores)"]
    if r.intra_ops:
        out.append(f"  {'op':<28} {'count':>6} {'split':>6} {'thr':>4} {'share':>6}  how (TF source)")
        for row in r.intra_ops[:MAX_ROWS]:
            how = row.mode + (", holds the GIL" if row.gil else "")
            src = (f" ({row.source.split(' (')[0]})" if row.source
                   else " (not in placelint's table: assumed single-threaded)")
            out.append(f"  {row.op:<28} {row.count:>6} {row.splitting:>6} {row.threads:>4} "
                       f"{row.share:>6.1%}  {how}{src}")
        if len(r.intra_ops) > MAX_ROWS:
            out.append(f"  ... and {len(r.intra_ops) - MAX_ROWS} more op types")
    out.append(f"  share of the estimated time in kernels that split at their size: {r.intra_share:.1%}")
    rec = r.recommendation
    out += ["", f"recommendation for {rec.cores} core(s): inter_op_parallelism_threads={rec.inter_op}, "
                f"intra_op_parallelism_threads={rec.intra_op}",
            f"  {rec.reason}"]
    if len(rec.table) > 1:
        out.append("  estimated step time relative to 1/1 (inter/intra): "
                   + ", ".join(f"{a}/{b} {v:.2f}" for (a, b), v in rec.table.items()))
    if rec.table_gil_released:
        out.append("  ... if the Python kernels release the GIL: "
                   + ", ".join(f"{a}/{b} {v:.2f}" for (a, b), v in rec.table_gil_released.items()))
    code = rec.code()
    out += ["  TF2:"] + ["    " + line for line in code["tf2"].splitlines()]
    out += ["  TF1 / Session:"] + ["    " + line for line in code["tf1"].splitlines()]
    for note in r.notes:
        out.append(f"note: {note}")
    return "\n".join(out) + "\n"
