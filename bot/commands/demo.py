"""``recipe-sync demo``: the main job, end to end, on the bundled fixtures (no GitHub, no server).

1. build the fixture repositories (``bot.fixtures``) as git repos;
2. ``align`` benchmark PR #3058 against the recipes repo, citing the saved CI runs;
3. apply the patch in the recipes repo (on a branch, as the App would push it);
4. ``audit`` every vLLM config before and after the patch.

Everything is written under ``--out``; the summary says where.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bot import gitcli
from bot.align.run import align
from bot.audit import AuditReport, render_html, render_markdown, run_audit
from bot.commands import align as align_command
from bot.commands.align import inputs_from_args, summary_lines, write_outputs
from bot.commands.owned import claim
from bot.fixtures import (
    BENCH_REPO_NAME,
    RECIPES_REPO_NAME,
    SEED_RECIPE,
    SeedFixtures,
    build_seed_fixtures,
)
from bot.present import present
from bot.rules import Rules, load_rules
from bot.sources import GitTreeSource


def build_parser() -> argparse.ArgumentParser:
    """The ``align`` command's own parser: the demo runs exactly what a user would type."""
    parser = argparse.ArgumentParser(prog="recipe-sync")
    align_command.register(parser.add_subparsers(dest="command"))
    return parser


ALIGNED_BRANCH = "recipe-sync-demo"
DEMO_IDENTITY = {"user.name": "recipe-sync demo", "user.email": "demo@recipe-sync.local"}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="run the main job on the bundled fixtures: align benchmark PR #3058, then audit",
        description="Build the bundled fixtures, align benchmark PR #3058 (patch, PR text, "
        "comment, plan.json), apply the patch to the recipes fixture and audit before and "
        "after (Markdown and HTML), all under --out (default .demo). Offline.",
    )
    parser.add_argument("--out", type=Path, default=Path(".demo"), help="output directory")
    parser.add_argument("--rules", type=Path, default=None, help="rules directory")
    parser.add_argument(
        "--force", action="store_true", help="replace OUT/repos even when demo did not make it"
    )
    parser.set_defaults(func=run)


def _git(repo: Path, *args: str) -> str:
    return gitcli.text(repo, *args, config=DEMO_IDENTITY).strip()


def apply_patch(recipes: Path, patch: Path) -> str:
    """Commit ``patch`` on a fresh branch of the recipes repo; return the new commit."""
    _git(recipes, "checkout", "-q", "-B", ALIGNED_BRANCH, "main")
    _git(recipes, "apply", "--index", str(patch))
    _git(recipes, "commit", "-q", "-m", "Align DeepSeek-V4.1-Flash with InferenceX #3058")
    sha = _git(recipes, "rev-parse", "HEAD")
    _git(recipes, "checkout", "-q", "main")
    return sha


def align_seed(seed: SeedFixtures, rules_dir: Path | None, out: Path) -> list[str]:
    """Align PR #3058 through exactly the ``recipe-sync align`` command line."""
    argv = [
        "align",
        "--bench-repo", str(seed.bench_repo),
        "--bench-ref", f"refs/pull/{seed.bench_pr_number}/head",
        "--recipes", str(seed.recipes_repo),
        "--recipes-ref", "main",
        "--bench-name", BENCH_REPO_NAME,
        "--bench-pr", str(seed.bench_pr_number),
        "--recipes-name", RECIPES_REPO_NAME,
        "--out", str(out),
    ]  # fmt: skip
    if seed.evidence_dir is not None:
        argv += ["--evidence", str(seed.evidence_dir)]
    if rules_dir is not None:
        argv += ["--rules", str(rules_dir)]
    args = build_parser().parse_args(argv)
    result = align(inputs_from_args(args))
    texts = present(result)
    return summary_lines(result, texts, write_outputs(result, texts, out))


def audit(seed: SeedFixtures, rules: Rules, recipes_ref: str, out: Path, name: str) -> AuditReport:
    report = run_audit(
        GitTreeSource(seed.bench_repo, seed.bench_pr_head),
        GitTreeSource(seed.recipes_repo, recipes_ref),
        rules,
    ).report
    (out / f"{name}.md").write_text(render_markdown(report), encoding="utf-8")
    (out / f"{name}.html").write_text(render_html(report), encoding="utf-8")
    return report


def _offered(plan_json: Path) -> str:
    """The candidates the alignment offered instead of writing (plan.json ``offered``)."""
    data = json.loads(plan_json.read_text(encoding="utf-8"))
    found = [
        o["after"] if o["subject"].startswith("--") else f"{o['subject']}={o['after']}"
        for p in data["plans"]
        for o in p.get("offered", ())
    ]
    return ", ".join(found)


def _counts(report: AuditReport) -> str:
    return ", ".join(f"{count} {status}" for status, count in report.by_status().items())


def run(args: argparse.Namespace) -> int:
    out: Path = args.out.resolve()
    rules = load_rules(args.rules)
    claim(out, ("repos",), "demo", force=args.force, flag="--out")
    seed = build_seed_fixtures(out / "repos")
    print(
        f"fixtures: benchmark PR #{seed.bench_pr_number} ({seed.bench_pr_branch}) in "
        f"{seed.bench_repo}, recipes in {seed.recipes_repo}"
    )

    print("\n== recipe-sync align (benchmark PR head vs recipes main, citing saved CI runs)")
    align_out = out / "align"
    for line in align_seed(seed, args.rules, align_out):
        print(line)

    print("\n== recipe-sync audit (every vLLM config point of the PR head)")
    before = audit(seed, rules, seed.recipes_base, out, "audit-before")
    print(f"before the alignment PR: {_counts(before)}")
    patch = align_out / "recipe.patch"
    if patch.exists():
        aligned = apply_patch(seed.recipes_repo, patch)
        after = audit(seed, rules, aligned, out, "audit-after")
        print(f"after applying {patch.name} ({SEED_RECIPE}): {_counts(after)}")
        offered = _offered(align_out / "plan.json")
        if offered:
            print(f"  left as they are: {offered} (offered in the PR, not proposed)")
    print(f"\nreports: {out / 'audit-before.html'}, {out / 'audit-after.html'}")
    print(f"alignment PR: {align_out / 'pr-title.txt'}, {align_out / 'pr-body.md'}")
    return 0
