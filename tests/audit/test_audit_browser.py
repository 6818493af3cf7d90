"""The HTML report in a real headless browser (Debian's chromium): the table and the chart
render, and sorting and filtering work after scripted clicks.

Chromium is installed with apt-get when it is missing (``make test`` does the same); the tests
skip, saying why, only when that is impossible here.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bot.audit import render_html, run_audit
from bot.audit.heatmap import heat_color
from bot.fixtures import SeedFixtures
from bot.rules import default_rules
from bot.sources import DirectorySource, GitTreeSource
from tests.shared import corpus_dir, shared_dir

RECIPES_URL = "https://github.com/vllm-project/recipes/blob/main/"

pytestmark = pytest.mark.slow  # a browser per test (a few seconds each)

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)
WINDOW = (1400, 1300)


def _find() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def chromium() -> str:
    found = _find()
    if found:
        return found
    apt = shutil.which("apt-get")
    if apt is None:
        pytest.skip("chromium is not installed and apt-get is not available to install it")
    sudo: list[str] = [] if os.geteuid() == 0 else ["sudo", "-n"]
    if sudo and shutil.which("sudo") is None:
        pytest.skip("chromium is not installed; installing it needs root (no sudo here)")
    try:
        for args in (
            ["update", "-qq"],
            ["install", "-y", "-qq", "--no-install-recommends", "chromium"],
        ):
            subprocess.run([*sudo, apt, *args], check=True, capture_output=True, timeout=900)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as err:
        output = getattr(err, "stderr", b"") or b""
        pytest.skip(f"chromium could not be installed: {output.decode(errors='replace')[-300:]}")
    found = _find()
    if not found:
        pytest.skip("apt-get installed chromium but no chromium executable is on PATH")
    return found


@pytest.fixture(scope="module")
def page(seed: SeedFixtures, tmp_path_factory: pytest.TempPathFactory) -> Path:
    report = run_audit(
        GitTreeSource(seed.bench_repo, seed.bench_pr_head),
        GitTreeSource(seed.recipes_repo, seed.recipes_base),
        default_rules(),
    ).report
    path = tmp_path_factory.mktemp("html") / "audit.html"
    path.write_text(render_html(report), encoding="utf-8")
    return path


def browse(chromium: str, tmp: Path, url: str, *extra: str) -> str:
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    done = subprocess.run(
        [
            chromium,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            *extra,
            url,
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    return done.stdout.decode("utf-8")


def with_script(page: Path, script: str, name: str) -> Path:
    """A copy of the page with a test script run after the page's own (a scripted click)."""
    text = page.read_text(encoding="utf-8")
    copy = page.with_name(name)
    copy.write_text(text.replace("</body>", f"<script>{script}</script></body>"), "utf-8")
    return copy


class Dom(HTMLParser):
    """Entries of the grouped table (status, hidden), chart marks and the body's attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, object]] = []
        self.cells: list[dict[str, str | None]] = []
        self.flags: list[dict[str, str | None]] = []
        self.groups: list[dict[str, object]] = []
        self.body: dict[str, str | None] = {}
        self.shown = ""
        self._in_shown = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "body":
            self.body = found
        if tag == "tbody" and "data-recipe" in found:
            self.groups.append({"recipe": found["data-recipe"], "hidden": "hidden" in found})
        if tag == "tr" and found.get("class") == "entry":
            self.rows.append(
                {
                    "status": found["data-status"],
                    "hardware": found["data-hardware"],
                    "hidden": "hidden" in found,
                    "lines": int(str(found["data-lines"])),
                }
            )
        if tag == "g" and "data-compared" in found:
            self.cells.append(found)
        if tag == "g" and "data-flag" in found:
            self.flags.append(found)
        if tag == "span" and found.get("id") == "shown":
            self._in_shown = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "span":
            self._in_shown = False

    def handle_data(self, data: str) -> None:
        if self._in_shown:
            self.shown += data


def dom(html: str) -> Dom:
    parsed = Dom()
    parsed.feed(html)
    return parsed


def test_grouped_table_and_charts_render(chromium: str, page: Path, tmp_path: Path) -> None:
    seen = dom(browse(chromium, tmp_path, page.as_uri(), "--dump-dom"))
    assert sum(int(str(r["lines"])) for r in seen.rows) == 40  # every launch line, collapsed
    assert len(seen.rows) < 40 and not any(r["hidden"] for r in seen.rows)
    assert seen.shown == f"showing {len(seen.rows)} of {len(seen.rows)} entries (40 launch lines)"
    drifted = [r for r in seen.rows if r["status"] == "drifted"]
    assert sum(int(str(r["lines"])) for r in drifted) == 7
    heat: dict[str, int] = {}
    for cell in seen.cells:  # recipe × hardware cells, summed per hardware
        hardware = str(cell["data-hardware"])
        heat[hardware] = heat.get(hardware, 0) + int(str(cell["data-drifted"]))
    assert heat["mi355x"] == 7 and sum(heat.values()) == 7
    assert seen.flags, "the top differing flags chart has bars"
    legend = page.read_text(encoding="utf-8")
    # the example is the map's busiest cell, read off the data (it was a fixed "27/45")
    busiest = max(seen.cells, key=lambda cell: int(str(cell["data-compared"])))
    drifted_there, compared = busiest["data-drifted"], busiest["data-compared"]
    assert (
        f"<b>{drifted_there}/{compared}</b> {busiest['data-recipe']} on "
        f"{busiest['data-hardware']}: {drifted_there} of the {compared} launch lines compared "
        "with the recipe drift"
    ) in legend
    assert "<b>–</b> launch lines exist but none could be compared" in legend


def test_filters_after_clicks_and_from_the_url(chromium: str, page: Path, tmp_path: Path) -> None:
    script = (
        "var s = document.getElementById('filter-status'); s.value = 'drifted';"
        "s.dispatchEvent(new Event('change'));"
        "document.body.setAttribute('data-hash', location.hash);"
    )
    clicked = with_script(page, script, "clicked.html")
    seen = dom(browse(chromium, tmp_path, clicked.as_uri(), "--dump-dom"))
    visible = [r for r in seen.rows if not r["hidden"]]
    assert {str(r["status"]) for r in visible} == {"drifted"}
    assert sum(int(str(r["lines"])) for r in visible) == 7
    assert seen.body["data-hash"] == "#status=drifted"  # the view is kept in the URL
    assert any(g["hidden"] for g in seen.groups)  # a recipe without drift folds away
    # a view given in the URL fragment (shareable links) filters the same way
    linked = dom(browse(chromium, tmp_path, page.as_uri() + "#hardware=h200", "--dump-dom"))
    assert {str(r["hardware"]) for r in linked.rows if not r["hidden"]} == {"h200"}
    # clicking a heat-map cell filters to that recipe and hardware
    cell = (
        "document.querySelector('g.cell[data-hardware=mi355x]').dispatchEvent(new Event('click'));"
    )
    heat = dom(
        browse(chromium, tmp_path, with_script(page, cell, "cell.html").as_uri(), "--dump-dom")
    )
    assert {str(r["hardware"]) for r in heat.rows if not r["hidden"]} == {"mi355x"}


MEASURE = (
    "var t = document.getElementById('rows'), de = document.documentElement;"
    "var whys = Array.prototype.slice.call(document.querySelectorAll('.why'));"
    "var off = whys.filter(function (w) { var r = w.getBoundingClientRect();"
    "  return r.width === 0 || r.right > window.innerWidth; }).length;"
    "document.body.setAttribute('data-layout', [t.scrollWidth, t.clientWidth,"
    "  Math.round(t.getBoundingClientRect().right), de.scrollWidth, window.innerWidth,"
    "  whys.length, off].join(','));"
    "var clipped = [], texts = 0;"
    "['heatmap', 'flags-chart'].forEach(function (id) {"
    " var svg = document.getElementById(id), box = svg.getBoundingClientRect();"
    " if (box.right > svg.parentNode.getBoundingClientRect().right + 0.5) { clipped.push(id); }"
    " Array.prototype.slice.call(svg.querySelectorAll('text')).forEach(function (t) {"
    "  var r = t.getBoundingClientRect(); texts += 1;"
    "  if (r.left < box.left - 0.5 || r.right > box.right + 0.5) { clipped.push(t.textContent); }"
    " });"
    "});"
    "document.body.setAttribute('data-clipped', clipped.join('|'));"
    "document.body.setAttribute('data-texts', String(texts));"
    "var legend = document.getElementById('heatmap-legend').getBoundingClientRect();"
    "document.body.setAttribute('data-legend', [Math.round(legend.width),"
    "  Math.round(legend.height)].join(','));"
    "['heatmap', 'rows'].forEach(function (id) {"
    " var r = document.getElementById(id).getBoundingClientRect();"
    " document.body.setAttribute('data-' + id,"
    "  [Math.round(r.left), Math.round(r.top), Math.round(r.right),"
    "   Math.round(r.bottom)].join(','));"
    "});"
)


def assert_layout(chromium: str, page: Path, tmp_path: Path) -> None:
    """No sideways scrolling at 1400 px, and every reason is on screen horizontally."""
    measured = dom(
        browse(chromium, tmp_path, with_script(page, MEASURE, "m.html").as_uri(), "--dump-dom")
    ).body
    scroll_w, client_w, right, doc_w, inner_w, whys, off = (
        int(v) for v in str(measured["data-layout"]).split(",")
    )
    assert inner_w == WINDOW[0]
    assert scroll_w <= client_w and right <= inner_w, "the main table overflows sideways"
    assert doc_w <= inner_w, "the page scrolls sideways"
    assert whys > 0 and off == 0, f"{off} of {whys} reasons are hidden or off-screen"
    # every chart label is drawn whole inside its chart, and the chart inside the page
    assert int(str(measured["data-texts"])) > 0
    assert measured["data-clipped"] == "", f"clipped: {measured['data-clipped']}"
    width, height = (int(v) for v in str(measured["data-legend"]).split(","))
    assert width > 200 and height > 20, "the heat-map legend is visible"


def test_layout_at_1400_px(chromium: str, page: Path, tmp_path: Path) -> None:
    assert_layout(chromium, page, tmp_path)


def read_png(data: bytes) -> tuple[int, int, int, bytes]:
    """(width, height, bytes per pixel, unfiltered pixels) of an 8-bit RGB(A) PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, bpp = 8, b"", 0, 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6) and body[12] == 0  # not interlaced
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    out = bytearray(height * stride)
    prev = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        out[y * stride : (y + 1) * stride] = line
        prev = line
    return width, height, bpp, bytes(out)


def test_screenshot_shows_the_chart_and_the_table(
    chromium: str, page: Path, tmp_path: Path
) -> None:
    measure = with_script(page, MEASURE, "measure.html")
    boxes = dom(browse(chromium, tmp_path, measure.as_uri(), "--dump-dom")).body
    chart = [int(v) for v in str(boxes["data-heatmap"]).split(",")]
    table = [int(v) for v in str(boxes["data-rows"]).split(",")]
    shot = tmp_path / "shot.png"
    browse(chromium, tmp_path, page.as_uri(), f"--screenshot={shot}")
    width, height, bpp, pixels = read_png(shot.read_bytes())
    assert (width, height) == WINDOW

    def colours(box: list[int]) -> dict[tuple[int, int, int], int]:
        left, top, right, bottom = box
        counts: dict[tuple[int, int, int], int] = {}
        for y in range(max(0, top), min(height, bottom)):
            for x in range(max(0, left), min(width, right)):
                i = (y * width + x) * bpp
                rgb = (pixels[i], pixels[i + 1], pixels[i + 2])
                counts[rgb] = counts.get(rgb, 0) + 1
        return counts

    def near(counts: dict[tuple[int, int, int], int], rgb: tuple[int, int, int]) -> int:
        return sum(n for c, n in counts.items() if all(abs(c[k] - rgb[k]) <= 12 for k in range(3)))

    in_chart = colours(chart)
    seen = dom(page.read_text(encoding="utf-8"))
    for cell in seen.cells:  # each cell's colour is on screen: its share of drifted lines
        compared = int(str(cell["data-compared"]))
        if compared:
            share = int(str(cell["data-drifted"])) / compared
            rgb = heat_color(share)
            want = (int(rgb[1:3], 16), int(rgb[3:5], 16), int(rgb[5:7], 16))
            assert near(in_chart, want) > 300, (cell, want)
    assert any(c["data-drifted"] != "0" for c in seen.cells)
    visible_table = [table[0], table[1], table[2], min(table[3], height)]
    assert visible_table[3] > visible_table[1], "the table starts inside the screenshot"
    in_table = colours(visible_table)
    ink = sum(n for c, n in in_table.items() if max(c) < 160)  # dark text pixels
    assert ink > 2000


@pytest.fixture(scope="module")
def real_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dashboard of the real InferenceX main (2026-08-21) against the recipes corpus."""
    shared = shared_dir()  # skips, saying why, without ../shared
    bundle = shared / "data" / "history" / "InferenceX-main-upto-2026-08-21.bundle"
    if not bundle.exists() or not corpus_dir().is_dir():
        pytest.skip("the InferenceX bundle or the recipes corpus is missing from ../shared")
    root = tmp_path_factory.mktemp("real-dashboard")
    subprocess.run(["git", "clone", "-q", str(bundle), str(root / "ix")], check=True)
    report = run_audit(
        GitTreeSource(root / "ix", "main"),
        DirectorySource(corpus_dir()),
        default_rules(),
        bench_name="SemiAnalysisAI/InferenceX",
        recipes_name="vllm-project/recipes",
    ).report
    report = replace(report, recipes_url=RECIPES_URL)  # a directory: links need a base
    path = root / "real.html"
    path.write_text(render_html(report), encoding="utf-8")
    (root / "drifted.txt").write_text(str(report.by_status()["drifted"]))
    return path


def test_real_dashboard_layout_at_1400_px(chromium: str, real_page: Path, tmp_path: Path) -> None:
    assert_layout(chromium, real_page, tmp_path)
    seen = dom(browse(chromium, tmp_path, real_page.as_uri(), "--dump-dom"))
    drifted = [r for r in seen.rows if r["status"] == "drifted"]
    # the drifted launch lines read as a handful of entries, one per distinct difference set
    lines = int((real_page.parent / "drifted.txt").read_text())
    assert lines > 20 and sum(int(str(r["lines"])) for r in drifted) == lines
    assert len(drifted) <= lines // 4
    page = real_page.read_text(encoding="utf-8")
    assert "href='https://github.com/SemiAnalysisAI/InferenceX/blob/" in page  # script lines
    assert f"href='{RECIPES_URL}models/deepseek-ai/DeepSeek-V4-Pro.yaml#L" in page
    assert "href='models/" not in page  # no relative (dead) recipe link
    # a drifted entry links the PR that introduced it and gives the command that fixes it
    assert "href='https://github.com/SemiAnalysisAI/InferenceX/pull/" in page
    assert page.count("<code class=cmd>recipe-sync align ") >= len(drifted)
    # what is not counted is folded, after the counted differences of its entry
    assert "<details class=uncounted><summary>" in page
    assert "--tool-call-parser" not in page.split("<details class=uncounted>")[0]
    assert page.index("id=out-of-scope") > page.index("id=rows")  # folded at the bottom
