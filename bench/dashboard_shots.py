"""Screenshots of the audit dashboard in headless Chromium at 1400 px (docs/dashboard.md).

    python -m bench.dashboard_shots --bench-repo DIR [--bench-ref REF] --recipes DIR
        [--recipes-ref REF] [--bench-name O/N] [--recipes-name O/N] [--recipes-url URL]
        [--history FILE] [--out docs/]

Writes ``dashboard-real.png`` (the top: counts, charts and the heat-map legend),
``dashboard-real-table.png`` (the grouped table, filtered to drifted entries through the URL
fragment: each entry's introducing PRs and fix command) and ``dashboard-real-entry.png`` (the
same with each entry's folded "not counted" differences opened).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from bot.audit import render_html, run_audit
from bot.commands.audit import load_history, recipes_url
from bot.commands.grammar import open_repo
from bot.rules import default_rules

WINDOW = "1400,1000"
# the table view: the counts and charts folded away so the table starts near the top
TABLE_ONLY = "<style>.charts, .sub { display: none; }</style></head>"
OPEN_UNCOUNTED = (
    "<script>document.querySelectorAll('details.uncounted').forEach("
    "function (d) { d.open = true; });</script></body>"
)


def shoot(chromium: str, page: Path, url_suffix: str, out: Path, profile: Path) -> None:
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            f"--user-data-dir={profile}",
            f"--window-size={WINDOW}",
            f"--screenshot={out}",
            page.as_uri() + url_suffix,
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    print(f"{out}: {out.stat().st_size // 1024} KiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench-repo", type=Path, required=True)
    parser.add_argument("--bench-ref")
    parser.add_argument("--recipes", type=Path, required=True)
    parser.add_argument("--recipes-ref")
    parser.add_argument("--bench-name", default="")
    parser.add_argument("--recipes-name", default="")
    parser.add_argument("--recipes-url", default="", help="base URL of recipe files (links)")
    parser.add_argument("--history", type=Path)
    parser.add_argument("--out", type=Path, default=Path("docs"))
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("chromium is not installed (make chromium)")
    report = run_audit(
        open_repo(args.bench_repo, args.bench_ref, "--bench-repo"),
        open_repo(args.recipes, args.recipes_ref, "--recipes"),
        default_rules(),
        bench_name=args.bench_name,
        recipes_name=args.recipes_name,
    ).report
    report = replace(  # the fix commands name the repositories as given, like the CLI's
        report,
        bench_path=str(args.bench_repo),
        recipes_path=str(args.recipes),
        recipes_ref=args.recipes_ref or "",
        recipes_url=recipes_url(args.recipes_url),
    )
    history = load_history(args.history) if args.history else []
    html = render_html(report, history)
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp) / "dashboard.html"
        top.write_text(html, encoding="utf-8")
        table = Path(tmp) / "table.html"
        table.write_text(html.replace("</head>", TABLE_ONLY, 1), encoding="utf-8")
        args.out.mkdir(parents=True, exist_ok=True)
        shoot(chromium, top, "", args.out / "dashboard-real.png", Path(tmp) / "p1")
        shoot(
            chromium,
            table,
            "#status=drifted",
            args.out / "dashboard-real-table.png",
            Path(tmp) / "p2",
        )
        entry = Path(tmp) / "entry.html"
        opened = html.replace("</head>", TABLE_ONLY, 1).replace("</body>", OPEN_UNCOUNTED, 1)
        entry.write_text(opened, encoding="utf-8")
        shoot(
            chromium,
            entry,
            "#status=drifted",
            args.out / "dashboard-real-entry.png",
            Path(tmp) / "p3",
        )


if __name__ == "__main__":
    main()
