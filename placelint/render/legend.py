"""The diagram's graph label: title, caption (devices, step, what the outlines mean),
and the key of devices, edges and marks, with what is drawn (a graph label takes no part
in the layout, unlike a legend node)."""

from __future__ import annotations

from .style import (BRANCH_COLOUR, GHOST_COLOUR, MOVED_COLOUR, NEW_COPY_COLOUR,
                    SEVERITY_STYLE, UNPLACED_FILL, html, human_bytes)
from .memory_bars import memory_rows
from .viewmodel import View


def legend(v: View, colour: dict[str, str]) -> str:
    """The graph's label: title, then devices, edge and mark keys and what is drawn,
    side by side (a graph label takes no part in the layout, unlike a legend node)."""
    dev_rows = ['<TD COLSPAN="2" ALIGN="LEFT"><B>Devices</B></TD>']
    for d in v.devices:
        dim = "" if d.nodes else ' COLOR="#888888"'
        dev_rows.append(f'<TD BGCOLOR="{colour[d.name]}" BORDER="1" FIXEDSIZE="TRUE" WIDTH="24" '
                        f'HEIGHT="14"></TD><TD ALIGN="LEFT"><FONT{dim}>{html(d.short)}: '
                        f'{d.nodes} node{"s" if d.nodes != 1 else ""}</FONT></TD>')
    dev_rows.append(f'<TD BGCOLOR="{UNPLACED_FILL}" BORDER="1" STYLE="dashed" FIXEDSIZE="TRUE" WIDTH="24" '
                    f'HEIGHT="14"></TD><TD ALIGN="LEFT">unplaced: {v.unplaced} node'
                    f'{"s" if v.unplaced != 1 else ""}</TD>')
    if any(len(u.devices) > 1 for u in v.units):
        dev_rows.append('<TD BORDER="1">▥</TD><TD ALIGN="LEFT">striped: a collapsed '
                        'scope on several devices</TD>')
    dev_rows += memory_rows(v, colour)

    if v.copies_unknown == v.copies:
        size = "size unknown" if v.copies else "none"
    else:
        size = human_bytes(v.copy_bytes) + (f" + {v.copies_unknown} of unknown size"
                                            if v.copies_unknown else "")
    key_rows = ['<TD COLSPAN="2" ALIGN="LEFT"><B>Edges</B></TD>',
                f'<TD><B>━━▶</B></TD><TD ALIGN="LEFT">copy between devices, bytes per '
                f'step: {v.copies} cop{"y" if v.copies == 1 else "ies"}, {html(size)}</TD>',
                '<TD>──▶</TD><TD ALIGN="LEFT">data</TD>',
                '<TD>┄┄▶</TD><TD ALIGN="LEFT">control</TD>',
                '<TD COLSPAN="2" ALIGN="LEFT"><B>Outlines</B> (full messages: hover a box in the SVG)'
                '</TD>']
    for sev, (colour, width) in SEVERITY_STYLE.items():
        count = sum(1 for u in v.units if u.severity == sev)
        key_rows.append(f'<TD BORDER="{int(width)}" COLOR="{colour}" FIXEDSIZE="TRUE" WIDTH="24" '
                        f'HEIGHT="14"></TD><TD ALIGN="LEFT">{sev} finding: {count} '
                        f'box{"es" if count != 1 else ""}</TD>')
    if v.intra_op_count:
        key_rows.append(f'<TD>▣</TD><TD ALIGN="LEFT">double border: splits over the '
                        f'intra-op pool ({v.intra_op_count} op{"s" if v.intra_op_count != 1 else ""})</TD>')
    if v.diff is not None:
        moved = sum(u.moved for u in v.units)
        added = sum(u.added for u in v.units)
        new = sum(e.new_copies for e in v.edges if not e.ghost)
        gone = len(v.diff.ghost_copies)
        key_rows += [
            f'<TD BORDER="3" COLOR="{MOVED_COLOUR}" FIXEDSIZE="TRUE" WIDTH="24" HEIGHT="14">'
            f'</TD><TD ALIGN="LEFT">moved: {moved}, new: {added} node'
            f'{"s" if added != 1 else ""} (removed: {v.diff.removed})</TD>',
            f'<TD><FONT COLOR="{NEW_COPY_COLOUR}"><B>━━▶</B></FONT></TD><TD ALIGN="LEFT">'
            f'new copy: {new}</TD>',
            f'<TD><FONT COLOR="{GHOST_COLOUR}">┅┅▶</FONT></TD><TD ALIGN="LEFT">removed '
            f'copy: {gone}</TD>']
    if v.branch_count:
        key_rows.append(f'<TD BORDER="2" COLOR="{BRANCH_COLOUR}"><FONT COLOR='
                        f'"{BRANCH_COLOUR}"><B>||</B></FONT></TD><TD ALIGN="LEFT">on the '
                        f'widest set of parallel branches: {v.branch_count} ops can run at '
                        f'once (inter-op width {v.width if v.width is not None else "?"})'
                        '</TD>')

    drawn = "<B>Drawn</B><BR/>" + "<BR/>".join(html(t) for t in summary(v))
    n = max(len(dev_rows), len(key_rows))
    empty = '<TD COLSPAN="2"></TD>'
    rows = []
    for i in range(n):
        left = dev_rows[i] if i < len(dev_rows) else empty
        right = key_rows[i] if i < len(key_rows) else empty
        extra = (f'<TD ROWSPAN="{n}" VALIGN="TOP" ALIGN="LEFT" BALIGN="LEFT">{drawn}</TD>'
                 if i == 0 else "")
        rows.append(f'<TR>{left}<TD WIDTH="18"></TD>{right}<TD WIDTH="18"></TD>{extra}</TR>')
    title = f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="14"><B>{html(v.title)}</B></FONT></TD></TR>'
    for line in caption(v):
        title += f'<TR><TD ALIGN="LEFT">{html(line)}</TD></TR>'
    return ('<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">' + title
            + '<TR><TD ALIGN="LEFT"><TABLE BORDER="1" COLOR="#999999" CELLBORDER="0" '
            'CELLSPACING="2" CELLPADDING="2" BGCOLOR="#F7F7F7">' + "".join(rows)
            + "</TABLE></TD></TR></TABLE>>")

def caption(v: View) -> list[str]:
    """Under the title: the device set, the step, and what the outlines mean."""
    out = [x for x in [v.subtitle, *v.caption] if x]
    if v.diff is not None:
        out.insert(0, f"changes since {v.diff.old}: teal outline = moved (old → new "
                      "device) or new node; green copy = new, grey dashed = removed")
    marks = ["red/orange/blue outline = error/warning/info finding (rule and cause in "
             "the box)"]
    if v.branch_count:
        marks.append(f"purple = the {v.branch_count} ops that can run at once (widest "
                     "parallel branches)")
    out.append("; ".join(marks))
    return out

def summary(v: View) -> list[str]:
    out = [f"{v.drawn_nodes} of {v.total_nodes} nodes"]
    if v.collapsed:
        out.append(f"{v.collapsed} collapsed scopes (square boxes; --max-nodes "
                   f"{v.options.max_nodes}, --expand SCOPE)")
    if v.cheap or v.passthrough:
        out.append(f"hidden: {v.cheap} constants/shape ops, {v.passthrough} identities "
                   "(--show-cheap)")
    if v.hubs:
        out.append(f"{len(v.hubs)} hub{'s' if len(v.hubs) > 1 else ''} drawn without edges "
                   f"(octagons; --hub-degree {v.options.hub_degree})")
    if v.outside_focus:
        out.append(f"{v.outside_focus} nodes beyond --radius {v.options.radius} of the focus")
    out += v.notes
    return out
