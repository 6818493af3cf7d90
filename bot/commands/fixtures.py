"""``recipe-sync fixtures OUT``: build the bundled fixture repositories as git repos."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bot.fixtures import build_seed_fixtures


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fixtures",
        help="build the bundled benchmark + recipes fixture repos (seed scenario) as git repos",
        description="Build the bundled fixtures (a benchmark repository with PR #3058, the "
        "recipes repository before the seed alignment, saved CI runs) as git repositories in "
        "OUT, for trying every command offline.",
    )
    parser.add_argument("out", type=Path, help="directory to create the repositories in")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    built = build_seed_fixtures(args.out)
    print(f"benchmark repo: {built.bench_repo}  (main {built.bench_base[:12]})")
    print(
        f"  PR #{built.bench_pr_number} branch {built.bench_pr_branch}: "
        f"run head {built.bench_run_head[:12]}, head {built.bench_pr_head[:12]}"
    )
    print(f"recipes repo:   {built.recipes_repo}  (main {built.recipes_base[:12]})")
    if built.evidence_dir:
        print(f"saved CI runs:  {built.evidence_dir}")
    return 0
