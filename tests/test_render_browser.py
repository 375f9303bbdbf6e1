"""Diagrams as a person sees them: SVGs drawn by the real ``dot`` and shown by a real
headless Chromium, scaled to a pull request's width as GitHub shows an image (where no
tooltip can be hovered). The browser reports where each text is drawn; the findings'
and changes' labels must be there, on the page, at a readable size.

CI installs Debian's ``chromium`` (``.ci/run``); without it these tests are skipped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.checkrun import SAMPLES, invoke
from tests.test_render_marks import big_model

#: GitHub's comment column is about this wide; an image wider than it is scaled down.
PAGE_WIDTH = 1280
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

#: Collects every text element of the inline SVG with its box on the page.
PROBE = """
<script>
window.addEventListener('load', () => {
  const svg = document.querySelector('svg').getBoundingClientRect();
  const texts = [];
  for (const t of document.querySelectorAll('svg text')) {
    const r = t.getBoundingClientRect(), cs = getComputedStyle(t);
    texts.push({text: t.textContent, x: r.left, y: r.top, w: r.width, h: r.height,
                visible: cs.visibility === 'visible' && cs.display !== 'none'
                         && cs.opacity !== '0' && cs.fill !== 'none',
                node: t.closest('g.node') !== null});
  }
  document.getElementById('out').textContent =
      JSON.stringify({svg: {w: svg.width, h: svg.height}, texts: texts});
});
</script>"""


def chromium() -> str | None:
    return os.environ.get("PLACELINT_CHROMIUM") or shutil.which("chromium") \
        or shutil.which("chromium-browser")


pytestmark = pytest.mark.skipif(chromium() is None, reason="chromium not installed")


def page(svg: Path, probe: bool = True) -> Path:
    """An HTML page showing the SVG inline at the pull-request width."""
    text = svg.read_text(encoding="utf-8")
    text = re.sub(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>", "", text)
    html = svg.with_suffix(".html")
    html.write_text(f"<!doctype html><html><head><meta charset='utf-8'><style>body{{margin:0}}"
                    f"svg{{width:{PAGE_WIDTH}px;height:auto}}</style></head><body>{text}"
                    + (f"<pre id='out'></pre>{PROBE}" if probe else "") + "</body></html>",
                    encoding="utf-8")
    return html


def browse(html: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp / "chromium-profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args,
                           html.as_uri()], capture_output=True, text=True, timeout=120)


def seen(svg: Path, tmp: Path) -> dict:
    """What the browser drew: the SVG's size on the page and every text with its box."""
    r = browse(page(svg), tmp, "--dump-dom", "--virtual-time-budget=5000")
    m = re.search(r"<pre id=\"out\">(.*?)</pre>", r.stdout, re.S)
    assert m and m.group(1), r.stderr[-2000:]
    return json.loads(m.group(1).replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))


def visible_label(data: dict, text: str, min_px: float = 6.0) -> dict:
    """The node text ``text``: drawn, inside the image, and tall enough to read."""
    hits = [t for t in data["texts"] if t["node"] and t["text"] == text]
    assert hits, f"{text!r} is not a visible text of any node"
    t = hits[0]
    assert t["visible"] and t["w"] > 0
    assert 0 <= t["x"] and t["x"] + t["w"] <= data["svg"]["w"] + 1
    assert 0 <= t["y"] and t["y"] + t["h"] <= data["svg"]["h"] + 1
    assert t["h"] >= min_px, f"{text!r} is {t['h']:.1f} px tall at {PAGE_WIDTH} px"
    return t


def draw(tmp: Path, name: str, *args) -> Path:
    out = tmp / f"{name}.svg"
    r = invoke(["graph", *args, "-o", out])
    assert r.exit_code == 0, r.stderr
    return out


def test_error_label_is_readable_in_the_browser(tmp_path):
    svg = draw(tmp_path, "alexnet", SAMPLES / "alexnet_cpu1_assign.pbtxt", "--devices", "CPU=1")
    data = seen(svg, tmp_path)
    visible_label(data, "PL101: wants CPU:1")
    visible_label(data, "Assign_3/value")
    # nothing said only in tooltips: the caption is text on the page too
    assert any(t["text"].startswith("devices: CPU:0") for t in data["texts"])


def test_4000_node_model_draws_its_finding_expanded(tmp_path):
    model = big_model(tmp_path / "big.pbtxt")
    svg = draw(tmp_path, "big", model, "--devices", "CPU=1")
    data = seen(svg, tmp_path)
    label = visible_label(data, "PL101: wants CPU:7")
    name = visible_label(data, "layer_42/relu")
    assert abs(name["y"] - label["y"]) < 4 * label["h"]        # the same box


def test_diff_diagram_marks_are_readable(tmp_path):
    old = SAMPLES / "cpu_vars_gpu_ops.pbtxt"
    new = tmp_path / "moved.pbtxt"
    new.write_text(old.read_text().replace('"/device:GPU:0"', '"/device:CPU:1"'))
    svg = draw(tmp_path, "diff", new, "--diff", old, "--devices", "CPU=2,GPU=1")
    data = seen(svg, tmp_path)
    for text in ("moved GPU:0 → CPU:1", "new: 8.0 KiB", "removed: 8.0 KiB", "new: 2.5 KiB"):
        visible_label(data, text)
    shot = tmp_path / "diff.png"
    r = browse(page(svg, probe=False), tmp_path, f"--screenshot={shot}", "--window-size=1280,900",
               "--hide-scrollbars")
    assert shot.is_file() and shot.stat().st_size > 10_000, r.stderr[-2000:]


def test_memory_bars_are_drawn_in_the_legend(tmp_path):
    """``graph --memory``: each device's figures are text on the page and its bar is drawn,
    as long as its share of the longest bar."""
    from PIL import Image

    from placelint.render.memory_bars import BAR_PX, RESIDENT_FILL
    svg = draw(tmp_path, "mlp", "tests/data/memory/wide_mlp.pbtxt", "--memory", "GPU=8GiB",
               "--batch-size", "256")
    data = seen(svg, tmp_path)
    texts = [t for t in data["texts"] if t["text"].startswith("GPU:0: 4.1 GiB resident")]
    assert texts and texts[0]["text"].endswith("of 8.0 GiB (51%)") and texts[0]["visible"]
    assert texts[0]["h"] >= 6
    shot = tmp_path / "mlp.png"
    r = browse(page(svg, probe=False), tmp_path, f"--screenshot={shot}",
               "--window-size=1280,900", "--hide-scrollbars")
    assert shot.is_file(), r.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    dark = tuple(int(RESIDENT_FILL[i:i + 2], 16) for i in (1, 3, 5))
    longest = 0
    for y in range(image.height):        # the longest run of the resident colour in a row
        run = 0
        for x in range(image.width):
            run = run + 1 if image.getpixel((x, y)) == dark else 0
            longest = max(longest, run)
    # GPU:0 holds 4.1 of its 8 GiB budget, the longest bar: about half of BAR_PX points,
    # times the page's scale (the SVG's viewBox, in points, is shown PAGE_WIDTH px wide)
    view_w = float(re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+)', svg.read_text()).group(1))
    expected = BAR_PX * (4360503296 / (8 << 30)) * PAGE_WIDTH / view_w
    assert abs(longest - expected) <= 0.2 * expected, (longest, expected)
