#!/usr/bin/env python3
"""Screenshot an SVG (e.g. from ``placelint graph``) in headless Chromium, to look at it.

    python tools/screenshot_svg.py graph.svg graph.png                 # whole drawing
    python tools/screenshot_svg.py graph.svg top.png --width 1600 --crop 0,0,1600,1000

The SVG is shown in a small HTML page scaled to ``--width`` CSS pixels (``--scale`` to
zoom instead), and Chromium's ``--screenshot`` captures the page. ``--crop X,Y,W,H`` (in
pixels of the scaled drawing) captures one part at full detail. Needs Debian's
``chromium`` (``apt-get install chromium``); the flags are the ones that work offline here.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--force-device-scale-factor=1"]
MAX_SIDE = 16000          # Chromium's screenshot gets unreliable beyond this


def svg_size(svg: Path) -> tuple[float, float]:
    """The drawing's width and height in CSS pixels (Graphviz writes points)."""
    head = svg.read_text(encoding="utf-8", errors="replace")[:4000]
    m = re.search(r'<svg[^>]*\swidth="([\d.]+)(pt|px)?"[^>]*\sheight="([\d.]+)(pt|px)?"', head, re.S)
    if not m:
        raise SystemExit(f"{svg}: no width/height on the <svg> element")
    w, wu, h, hu = float(m.group(1)), m.group(2), float(m.group(3)), m.group(4)
    return (w * 4 / 3 if wu == "pt" else w), (h * 4 / 3 if hu == "pt" else h)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("svg", type=Path)
    ap.add_argument("png", type=Path)
    ap.add_argument("--width", type=int, default=None,
                    help="scale the drawing to this many pixels wide (default: natural size, "
                         "at most 4000)")
    ap.add_argument("--scale", type=float, default=None, help="zoom factor instead of --width")
    ap.add_argument("--crop", default=None, metavar="X,Y,W,H",
                    help="capture only this rectangle of the scaled drawing")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = ap.parse_args(argv)

    w, h = svg_size(args.svg)
    if args.scale is not None:
        scale = args.scale
    elif args.width is not None:
        scale = args.width / w
    else:
        scale = min(1.0, 4000 / w)
    sw, sh = int(w * scale) + 1, int(h * scale) + 1
    x = y = 0
    vw, vh = sw, sh
    if args.crop:
        x, y, vw, vh = (int(v) for v in args.crop.split(","))
    vw, vh = min(vw, MAX_SIDE), min(vh, MAX_SIDE)
    with tempfile.TemporaryDirectory(prefix="placelint-shot-") as tmp:
        page = Path(tmp) / "page.html"
        page.write_text(
            "<!doctype html><html><body style='margin:0;background:white;overflow:hidden'>"
            f"<img src='{args.svg.resolve().as_uri()}' style='position:absolute;left:{-x}px;"
            f"top:{-y}px;width:{sw}px;height:{sh}px'></body></html>", encoding="utf-8")
        cmd = [args.chromium, *FLAGS, f"--user-data-dir={tmp}/profile",
               f"--window-size={vw},{vh}", f"--screenshot={args.png.resolve()}",
               "--allow-file-access-from-files", page.as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 or not args.png.exists():
        sys.stderr.write(proc.stderr[-2000:])
        return 1
    print(f"{args.png}: {vw}x{vh} px of a {sw}x{sh} px drawing (scale {scale:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
