"""The legend's memory rows: per device, its resident bytes and the peak of one step as a
bar (dark: resident, light: peak; outlined to the budget when one is set, red past it), and
the figures in words.

The bars share one scale: the largest of any device's total (resident + peak) and budget
is ``BAR_PX`` pixels wide, so devices compare at a glance. A device that holds nothing and
has no budget gets no row.
"""

from __future__ import annotations

from .style import html, human_bytes
from .viewmodel import View

BAR_PX = 160                     #: width of the longest bar
BAR_HEIGHT = 10
RESIDENT_FILL = "#555555"
PEAK_FILL = "#BBBBBB"
OVER_RESIDENT_FILL = "#CC3311"   #: a device over its budget: its bar turns red
OVER_PEAK_FILL = "#EE9988"


def bar_caption(m: dict) -> str:
    """``4.1 GiB resident + 32 MiB peak = 4.1 GiB of 4.0 GiB (102%)``; ``+?`` when ops of
    unknown size are not counted."""
    total = m["resident_bytes"] + m["peak_bytes"]
    unknown = "+?" if m["unknown_ops"] else ""
    text = (f"{human_bytes(m['resident_bytes'])} resident + {human_bytes(m['peak_bytes'])} peak"
            f" = {human_bytes(total)}{unknown}")
    budget = m.get("budget_bytes")
    if budget:
        text += f" of {human_bytes(budget)} ({total / budget:.0%})"
    return text


def _cell(width: int, fill: str, border: int = 0) -> tuple[int, str]:
    return width, (f'<TD FIXEDSIZE="TRUE" WIDTH="{width}" HEIGHT="{BAR_HEIGHT}" '
                   f'BGCOLOR="{fill}" BORDER="{border}"></TD>')


def _px(n: int, scale: int) -> int:
    """Pixels for ``n`` bytes; at least 1 for a non-zero size, so it stays visible."""
    return 0 if n <= 0 else max(1, round(BAR_PX * n / scale))


def bar(m: dict, scale: int) -> str:
    """A one-row table: resident and peak cells, then the free part of the budget."""
    resident, peak = m["resident_bytes"], m["peak_bytes"]
    total, budget = resident + peak, m.get("budget_bytes") or 0
    over = bool(budget) and total > budget
    cells = []
    if resident:
        cells.append(_cell(_px(resident, scale), OVER_RESIDENT_FILL if over else RESIDENT_FILL))
    if peak:
        cells.append(_cell(_px(peak, scale), OVER_PEAK_FILL if over else PEAK_FILL))
    if budget > total:
        free = _px(budget, scale) - sum(_px(n, scale) for n in (resident, peak))
        if free > 0:
            cells.append(_cell(free, "#FFFFFF", 1))
    if not cells:
        cells.append(_cell(1, "#FFFFFF"))
    # a fixed size and ALIGN: else Graphviz stretches the table to its cell and spreads
    # the fixed-size cells apart
    width = sum(w for w, _ in cells)
    return (f'<TABLE ALIGN="LEFT" FIXEDSIZE="TRUE" WIDTH="{width}" HEIGHT="{BAR_HEIGHT}" '
            'BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0"><TR>'
            + "".join(td for _, td in cells) + "</TR></TABLE>")


def memory_rows(v: View, colour: dict[str, str]) -> list[str]:
    """The legend rows (two cells each: the device's swatch, its bar over its figures)."""
    shown = [d for d in v.devices if d.memory is not None and (
        d.memory["resident_bytes"] or d.memory["peak_bytes"] or d.memory.get("budget_bytes"))]
    if not shown:
        return []
    scale = max(max(d.memory["resident_bytes"] + d.memory["peak_bytes"],
                    d.memory.get("budget_bytes") or 0) for d in shown) or 1
    rows = ['<TD COLSPAN="2" ALIGN="LEFT"><B>Memory</B> (dark: resident, light: peak of one '
            'step; outline: budget)</TD>']
    for d in shown:
        m = d.memory
        over = bool(m.get("budget_bytes")) and (m["resident_bytes"] + m["peak_bytes"]
                                               > m["budget_bytes"])
        text = html(f"{d.short}: {bar_caption(m)}")
        if over:
            text = f'<FONT COLOR="{OVER_RESIDENT_FILL}"><B>{text}</B></FONT>'
        rows.append(f'<TD BGCOLOR="{colour[d.name]}" BORDER="1" FIXEDSIZE="TRUE" WIDTH="24" '
                    f'HEIGHT="14"></TD><TD ALIGN="LEFT"><TABLE BORDER="0" CELLBORDER="0" '
                    f'CELLSPACING="0" CELLPADDING="1"><TR><TD ALIGN="LEFT">{text}</TD></TR>'
                    f'<TR><TD ALIGN="LEFT">{bar(m, scale)}</TD></TR></TABLE></TD>')
    return rows
