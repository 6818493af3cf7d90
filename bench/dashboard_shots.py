"""Screenshots of the audit dashboard in headless Chromium at 1400 px (the README's images).

    python -m bench.dashboard_shots --bench-repo DIR [--bench-ref REF] --recipes DIR
        [--recipes-ref REF] [--bench-name O/N] [--recipes-name O/N] [--history FILE]
        [--out docs/]

Writes ``dashboard-real.png`` (the top: counts and charts) and ``dashboard-real-table.png``
(the grouped table, filtered to drifted entries through the URL fragment).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

from bot.audit import render_html, run_audit
from bot.commands.audit import load_history
from bot.commands.grammar import open_repo
from bot.rules import default_rules

WINDOW = "1400,1000"
# the table view: the counts and charts folded away so the table starts near the top
TABLE_ONLY = "<style>.charts, .sub { display: none; }</style></head>"


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


if __name__ == "__main__":
    main()
