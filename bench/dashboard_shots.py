"""Screenshots of the audit dashboard and the backtest report of the real repositories, in
headless Chromium at 1400 and 800 px (docs/dashboard.md; ``make screenshots``).

    python -m bench.dashboard_shots [--shared DIR] [--out docs/]

Clones the history bundles of ``DIR/data/history`` (default ``../shared``) into a temporary
directory and works there with relative names (``InferenceX``, ``recipes``,
``recipes-corpus-8959cf6``), so no path of this machine shows in an image. Replays the
benchmark PRs of :data:`WINDOW` (``recipe-sync backtest``), audits InferenceX main against
the recipes corpus with that history (the drift-over-time chart), and writes:

- ``dashboard-real.png`` and ``dashboard-real-800.png``: the top of the dashboard ("Start
  here", counts, charts) at 1400 and 800 px;
- ``dashboard-real-table.png``: the grouped table filtered to drifted entries through the
  URL fragment (each entry's introducing PRs and fix command), 1400 px;
- ``dashboard-real-entry.png``: the same with each entry's folded "not counted"
  differences opened;
- ``backtest-real.png`` and ``backtest-real-800.png``: the backtest report of the window.

Exits 0 without writing anything, saying why, when Chromium (Debian's ``chromium``: ``make
chromium``) or the shared data is missing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from bot.audit import render_html, run_audit
from bot.backtest.formats import to_html
from bot.backtest.run import run_backtest, settings_for
from bot.commands.grammar import open_repo
from bot.present.page import HistoryPoint
from bot.rules import default_rules

WIDTHS = (1400, 800)
HEIGHT = 1000
BENCH_BUNDLE = "InferenceX-main-upto-2026-08-21.bundle"
RECIPES_BUNDLE = "recipes-main-upto-2026-07-31.bundle"
CORPUS = "recipes-corpus-8959cf6"  # the recipes on 2026-08-21, the audited benchmark's day
WINDOW = ("2026-07-16", "2026-07-31")  # the backtest: the last half-month of both histories
BENCH_NAME = "SemiAnalysisAI/InferenceX"
RECIPES_NAME = "vllm-project/recipes"
RECIPES_URL = "https://github.com/vllm-project/recipes/blob/main/"
# the table view: the counts and charts folded away so the table starts near the top
TABLE_ONLY = "<style>.charts, .sub, .start, .cards { display: none; }</style></head>"
OPEN_UNCOUNTED = (
    "<script>document.querySelectorAll('details.uncounted').forEach("
    "function (d) { d.open = true; });</script></body>"
)


def skip(reason: str) -> None:
    print(f"make screenshots: skipped: {reason}")
    raise SystemExit(0)


def shoot(chromium: str, page: Path, url_suffix: str, out: Path, width: int) -> None:
    profile = page.parent / f"profile-{out.stem}"
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            f"--user-data-dir={profile}",
            f"--window-size={width},{HEIGHT}",
            f"--screenshot={out}",
            page.as_uri() + url_suffix,
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    print(f"{out.name}: {width} px, {out.stat().st_size // 1024} KiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=Path("../shared"))
    parser.add_argument("--out", type=Path, default=Path("docs"))
    parser.add_argument("--jobs", type=int, default=2, help="backtest worker processes")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        skip("chromium is not installed (Debian's chromium package; `make chromium`)")
    shared = args.shared.resolve()  # before the work moves to a temporary directory
    history_dir = shared / "data" / "history"
    needed = [
        history_dir / BENCH_BUNDLE,
        history_dir / RECIPES_BUNDLE,
        shared / "data" / CORPUS,
    ]
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        skip(f"the shared data is missing: {', '.join(missing)}")
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            for bundle, name in ((BENCH_BUNDLE, "InferenceX"), (RECIPES_BUNDLE, "recipes")):
                subprocess.run(["git", "clone", "-q", str(history_dir / bundle), name], check=True)
            Path(CORPUS).symlink_to(shared / "data" / CORPUS)
            pages = _pages(Path(tmp), args.jobs)
            for name, (page, suffix, widths) in pages.items():
                for width in widths:
                    stem = name if width == WIDTHS[0] else f"{name}-{width}"
                    shoot(chromium, page, suffix, out / f"{stem}.png", width)
        finally:
            os.chdir(here)


def _pages(tmp: Path, jobs: int) -> dict[str, tuple[Path, str, tuple[int, ...]]]:
    """Each screenshot's page, URL fragment and widths (pages written under ``tmp``)."""
    settings = replace(
        settings_for(Path("InferenceX"), Path("recipes")),
        bench_name=BENCH_NAME,
        recipes_name=RECIPES_NAME,
    )
    since, until = WINDOW
    print(f"backtest {since} .. {until} …", file=sys.stderr)
    backtest = run_backtest(settings, since=since, until=until, jobs=jobs)
    print(backtest.summary(), file=sys.stderr)
    history = [HistoryPoint(row.day, row.outcome) for row in backtest.rows]
    print("audit …", file=sys.stderr)
    report = run_audit(
        open_repo(Path("InferenceX"), "main", "--bench-repo", quiet=True),
        open_repo(Path(CORPUS), None, "--recipes", quiet=True),
        default_rules(),
        jobs=jobs,
        bench_name=BENCH_NAME,
    ).report
    report = replace(  # the fix commands and the labels name the repositories as cloned
        report,
        recipes_label=CORPUS,
        bench_path="InferenceX",
        recipes_path=CORPUS,
        recipes_url=RECIPES_URL,
    )
    html = render_html(report, history)
    files = {
        "top": html,
        "table": html.replace("</head>", TABLE_ONLY, 1),
        "entry": html.replace("</head>", TABLE_ONLY, 1).replace("</body>", OPEN_UNCOUNTED, 1),
        "backtest": to_html(backtest),
    }
    machine = [str(tmp), str(tmp.resolve()), str(Path(CORPUS).resolve()), str(Path.home())]
    for name, text in files.items():
        leaked = [path for path in machine if path in text]
        if leaked:  # an image must show no path of this machine
            raise SystemExit(f"{name}: the page shows {', '.join(leaked)}")
        (tmp / f"{name}.html").write_text(text, encoding="utf-8")
    return {
        "dashboard-real": (tmp / "top.html", "", WIDTHS),
        "dashboard-real-table": (tmp / "table.html", "#status=drifted", WIDTHS[:1]),
        "dashboard-real-entry": (tmp / "entry.html", "#status=drifted", WIDTHS[:1]),
        "backtest-real": (tmp / "backtest.html", "", WIDTHS),
    }


if __name__ == "__main__":
    main()
