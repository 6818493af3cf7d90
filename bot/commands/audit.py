"""``recipe-sync audit``: every vLLM config point of a benchmark repository against the
recipes, as Markdown, JSON or a self-contained HTML page.

Both repositories are read as directories or, with ``--bench-ref`` / ``--recipes-ref``, as a
git commit (nothing is checked out). The audit always finishes: a row that cannot be
compared carries the reason as its status. Exit status 0 when no row drifted, 1 when some
did, 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from bot.audit.html import render_html
from bot.audit.markdown import render_markdown
from bot.audit.progress import ProgressBar
from bot.audit.run import run_audit
from bot.errors import InputError, Location
from bot.rules import load_rules
from bot.sources import open_source


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="audit every vLLM config point of a benchmark repository against the recipes",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--bench-repo", type=Path, required=True, help="benchmark repository")
    parser.add_argument("--bench-ref", help="read this git commit of --bench-repo")
    parser.add_argument("--recipes", type=Path, required=True, help="recipes repository")
    parser.add_argument("--recipes-ref", help="read this git commit of --recipes")
    parser.add_argument("--format", choices=("md", "json", "html"), default="md")
    parser.add_argument("--out", type=Path, help="write the report here (default: stdout)")
    parser.add_argument(
        "--jobs",
        type=int,
        default=0,
        help="worker processes (default 0: every core once there are enough points)",
    )
    parser.add_argument("--rules", type=Path, help="rules directory (default: bundled rules/)")
    parser.set_defaults(func=audit_command)


def audit_command(args: argparse.Namespace) -> int:
    if args.jobs < 0:
        raise InputError(Location("--jobs"), "must be 0 (automatic) or a positive number")
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.WARNING, format="recipe-sync: %(levelname)s %(message)s")
    rules = load_rules(args.rules)
    bench = open_source(args.bench_repo, args.bench_ref)
    recipes = open_source(args.recipes, args.recipes_ref)
    bar = ProgressBar.for_terminal(sys.stderr)
    started = time.perf_counter()
    run = run_audit(
        bench,
        recipes,
        rules,
        jobs=args.jobs,
        progress=bar,
        on_plan=bar.start if bar is not None else None,
    )
    if bar is not None:
        bar.finish()
    report = run.report
    if args.format == "json":
        text = json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"
    elif args.format == "html":
        text = render_html(report)
    else:
        text = render_markdown(report)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    counts = report.by_status()
    summary = ", ".join(f"{counts[s]} {s}" for s in counts)
    elapsed = time.perf_counter() - started
    where = f" → {args.out}" if args.out is not None else ""
    serving = [e for e in report.drift_by_recipe() if "serving" in e["classes"]]
    leading = (
        "serving drift in " + ", ".join(f"{e['recipe']} ({e['rows']})" for e in serving) + "; "
        if serving
        else ""
    )
    print(
        f"audit: {len(report.rows)} launch lines ({summary}); {leading}"
        f"{len(report.out_of_scope)} config keys out of scope; "
        f"{elapsed:.1f} s, {run.workers} process(es){where}",
        file=sys.stderr,
    )
    return 1 if counts.get("drifted") else 0  # README "Exit codes"
