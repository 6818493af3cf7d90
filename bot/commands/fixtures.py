"""``recipe-sync fixtures OUT``: build the bundled fixture repositories as git repos."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bot.commands.owned import claim
from bot.fixtures import build_seed_fixtures

BUILT = ("benchmark", "recipes", "evidence")  # what build_seed_fixtures replaces in OUT


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fixtures",
        help="build the bundled benchmark + recipes fixture repos (seed scenario) as git repos",
        description="Build the bundled fixtures (a benchmark repository with PR #3058, the "
        "recipes repository before the seed alignment, saved CI runs) as git repositories in "
        "OUT, for trying every command offline.",
    )
    parser.add_argument("out", type=Path, help="directory to create the repositories in")
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace OUT/benchmark, OUT/recipes and OUT/evidence even when this command "
        "did not make them",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    claim(args.out, BUILT, "fixtures", force=args.force, flag="OUT")
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
