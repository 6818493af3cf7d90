"""``recipe-sync audit``: every vLLM config point of a benchmark repository against the
recipes, as Markdown, JSON or a self-contained HTML dashboard.

Both repositories are read at a git commit (default: HEAD; a plain directory is read as it
is), nothing is checked out. The audit always finishes: a row that cannot be compared
carries the reason as its status, and a master config that cannot be read at all (malformed,
or aliases that expand past the bound) is left out, named in the report's warnings and on
stderr. ``--history`` adds a drift-over-time chart to the HTML
dashboard from ``recipe-sync backtest --format json`` output.

Exit status: 0 when no row drifted, 1 when some did, 2 for bad input, also when a master
config could not be read (after the report of the rest is written).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.audit.history import load_history
from bot.audit.html import render_html
from bot.audit.markdown import render_markdown
from bot.audit.run import run_audit
from bot.commands.grammar import (
    add_command,
    add_jobs,
    add_output,
    add_repo,
    jobs,
    link_name,
    open_repo,
    output_format,
    repo_name,
    require_recipes,
)
from bot.commands.progress import Progress
from bot.errors import InputError, Location
from bot.rules import load_rules
from bot.words import count


def register(subparsers: Any) -> None:
    summary = "audit every vLLM config point of a benchmark repository against the recipes"
    parser = add_command(subparsers, "audit", __doc__, summary)
    add_repo(parser, "bench")
    add_repo(parser, "recipes")
    add_output(parser, "write the report to this file (default: stdout)")
    add_jobs(parser, 0, "worker processes (default 0: every core once there are enough points)")
    parser.add_argument(
        "--history",
        type=Path,
        metavar="FILE",
        help="backtest JSON (recipe-sync backtest --format json): adds drift over time (html)",
    )
    parser.add_argument(
        "--recipes-url",
        metavar="URL",
        help="base URL of recipe files for links, e.g. "
        "https://github.com/vllm-project/recipes/blob/main/ (default: GitHub at the audited "
        "commit when --recipes is a named git repository, else relative paths)",
    )
    parser.add_argument("--rules", type=Path, help="rules directory (default: bundled rules/)")
    parser.set_defaults(func=audit_command)


def recipes_url(value: str | None) -> str:
    """``--recipes-url``: an http(s) base, always ending in ``/``."""
    if not value:
        return ""
    if not value.startswith(("https://", "http://")):
        raise InputError(Location("--recipes-url"), f"{value!r} is not an http(s) URL")
    return value if value.endswith("/") else value + "/"


def audit_command(args: argparse.Namespace) -> int:
    workers = jobs(args)
    fmt = output_format(args)
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.WARNING, format="recipe-sync: %(levelname)s %(message)s")
    rules = load_rules(args.rules)
    base_url = recipes_url(args.recipes_url)
    bench = open_repo(args.bench_repo, args.bench_ref, "--bench-repo")
    recipes = open_repo(args.recipes, args.recipes_ref, "--recipes")
    require_recipes(recipes, args.recipes)
    history = load_history(args.history) if args.history is not None else []
    bar = Progress(sys.stderr, "audit", "launch lines")
    started = time.perf_counter()
    run = run_audit(
        bench,
        recipes,
        rules,
        jobs=workers,
        progress=bar.advance,
        on_plan=bar.start,
        bench_name=link_name(repo_name(args.bench_repo, args.bench_name)),
        recipes_name=link_name(repo_name(args.recipes, args.recipes_name)),
    )
    bar.finish()
    report = replace(  # what the fix commands and links of the report name
        run.report,
        bench_path=str(args.bench_repo),
        recipes_path=str(args.recipes),
        recipes_ref=args.recipes_ref or "",
        recipes_url=base_url,
    )
    if fmt == "json":
        text = json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"
    elif fmt == "html":
        text = render_html(report, history)
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
    where = f" → {args.out} ({fmt})" if args.out is not None else ""
    serving = report.serving_drift()
    leading = (
        "serving drift in " + ", ".join(f"{e['recipe']} ({e['rows']})" for e in serving) + "; "
        if serving
        else ""
    )
    print(
        f"audit: {len(report.rows)} launch lines ({summary}); {leading}"
        f"{count(len(report.out_of_scope), 'config key')} out of scope; "
        f"{elapsed:.1f} s, {run.workers} process(es){where}",
        file=sys.stderr,
    )
    for why in report.unread:
        print(f"recipe-sync: error: {why}", file=sys.stderr)
    if report.unread:
        return 2  # the report is of the rest: it cannot say "no drift"
    return 1 if counts.get("drifted") else 0  # docs/cli.md "Exit codes"
