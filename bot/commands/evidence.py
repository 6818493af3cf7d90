"""``recipe-sync evidence``: cite the workflow runs that verified a benchmark PR.

Online: ``recipe-sync evidence --repo OWNER/NAME --pr N`` reads runs, jobs and logs through
``bot.github.actions`` with ``$GITHUB_TOKEN``. That module must provide
``run_source(repo: str, token: str) -> RunSource`` and, unless ``--pr-head`` is given,
``get_pull(repo: str, token: str, number: int) -> dict`` (the REST pull request JSON).

Offline: ``recipe-sync evidence --from-dir DIR`` reads saved responses (layout in
:mod:`bot.evidence.source`); the PR head, branch and number default to ``DIR/pull.json``.

Either way, ``--bench-repo GITDIR`` (a local clone holding the run's and the PR's heads) gives
script blob identity and ``perf-changelog.yaml`` at the PR head; ``--expected-argv FILE`` (a
JSON object: job-name glob → argv list, first match wins) gives the statically extracted
launch lines to compare with. Prints the Markdown section, or the report with ``--json``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.benchmarks.changelog import ChangelogEntry, entries_for, parse_changelog
from bot.commands.grammar import add_command, add_output, output_format, write
from bot.errors import InputError, Location, RecipeSyncError
from bot.evidence.collect import collect_evidence
from bot.evidence.jobname import JobName
from bot.evidence.model import EvidenceReport, report_as_json
from bot.evidence.source import DirRunSource, RunSource
from bot.github import actions
from bot.present.evidence import render_evidence_section
from bot.rules import default_rules
from bot.sources import GitTreeSource, git_blob_sha_at, read_text

CHANGELOG_PATH = "perf-changelog.yaml"


def register(subparsers: Any) -> None:
    summary = "cite the workflow runs, launch lines and evals that verified a benchmark PR"
    parser = add_command(subparsers, "evidence", __doc__, summary)
    parser.add_argument("--repo", help="benchmark repository OWNER/NAME")
    parser.add_argument("--pr", type=int, help="benchmark PR number")
    parser.add_argument("--from-dir", type=Path, help="saved runs/jobs/logs (offline)")
    parser.add_argument("--bench-repo", type=Path, help="local git clone of the benchmark repo")
    parser.add_argument("--pr-head", help="the PR's current head SHA")
    parser.add_argument("--head-branch", help="the PR's head branch (finds fork PR runs)")
    parser.add_argument(
        "--earlier-head",
        action="append",
        default=[],
        help="an earlier head SHA of the PR whose runs to include (repeatable)",
    )
    parser.add_argument("--script", help="benchmark script path (default: from the job log)")
    parser.add_argument("--config-key", help="master-config key whose perf-changelog to quote")
    parser.add_argument("--expected-argv", type=Path, help="JSON: job-name glob → argv list")
    parser.add_argument(
        "--job", action="append", default=[], help="only jobs whose name matches this glob"
    )
    parser.add_argument("--hardware-label", help="section heading label (default: from runner)")
    add_output(
        parser, "write the section or report to this file (default: stdout)", formats=("md", "json")
    )
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # = --format json
    parser.set_defaults(func=run)


def github_run_source(repo: str, token: str | None) -> RunSource:
    """The GitHub Actions :class:`RunSource` for ``repo`` (needs ``GITHUB_TOKEN``)."""
    if not token:
        raise RecipeSyncError("GITHUB_TOKEN is not set; use --from-dir DIR to work offline")
    return actions.run_source(repo, token)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _pull_fields(
    pull: dict[str, Any] | None,
) -> tuple[str | None, str | None, str | None, int | None, str | None]:
    """(head sha, head branch, head repo, number, base repo) from a REST pull request."""
    pull = _object(pull)
    head, base = _object(pull.get("head")), _object(pull.get("base"))
    number = pull.get("number")

    def string(value: Any) -> str | None:
        return value if isinstance(value, str) else None

    return (
        string(head.get("sha")),
        string(head.get("ref")),
        string(_object(head.get("repo")).get("full_name")),
        number if isinstance(number, int) and not isinstance(number, bool) else None,
        string(_object(base.get("repo")).get("full_name")),
    )


def expected_argv_from_file(path: Path) -> Callable[[JobName], tuple[str, ...] | None]:
    """``{"<job-name glob>": [argv…], …}`` → the collector's ``expected_argv`` callback."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(Location(str(path)), f"cannot read file: {err}") from err
    except json.JSONDecodeError as err:
        raise InputError(
            Location(str(path), line=err.lineno), f"malformed JSON: {err.msg}"
        ) from err
    if not isinstance(data, dict):
        raise InputError(Location(str(path)), "expected an object: job-name glob → argv list")
    table: list[tuple[str, tuple[str, ...]]] = []
    for pattern, argv in data.items():
        if not isinstance(argv, list) or not all(isinstance(word, str) for word in argv):
            raise InputError(Location(str(path), key=pattern), "argv must be a list of strings")
        table.append((pattern, tuple(argv)))

    def expected(job: JobName) -> tuple[str, ...] | None:
        return next(
            (argv for pattern, argv in table if fnmatch.fnmatchcase(job.raw, pattern)), None
        )

    return expected


def _changelog(
    args: argparse.Namespace, pr_head: str, pr_number: int | None
) -> tuple[ChangelogEntry, ...]:
    if not args.config_key:
        return ()
    text: str | None = None
    label = CHANGELOG_PATH
    if args.bench_repo is not None:
        tree = GitTreeSource(args.bench_repo, pr_head)
        if tree.exists(CHANGELOG_PATH):
            text, label = read_text(tree, CHANGELOG_PATH), f"{tree.label}:{CHANGELOG_PATH}"
    elif args.from_dir is not None and (args.from_dir / CHANGELOG_PATH).is_file():
        path = args.from_dir / CHANGELOG_PATH
        text, label = path.read_text(encoding="utf-8"), str(path)
    if text is None:
        return ()
    return entries_for(parse_changelog(text, label), args.config_key, pr_number)


def _hardware_label(report: EvidenceReport) -> str:
    items = report.cited() or report.evidence
    if not items:
        return "Benchmark"
    runner = items[0].job.runner
    hardware = default_rules().hardware.hardware_for_runner(runner)
    return (hardware or runner.removeprefix("cluster:")).upper()


def run(args: argparse.Namespace) -> int:
    pull: dict[str, Any] | None = None
    if args.from_dir is not None:
        dir_source = DirRunSource(args.from_dir)
        source: RunSource = dir_source
        pull = dir_source.pull()
    elif args.repo and args.pr is not None:
        token = os.environ.get("GITHUB_TOKEN") or ""
        source = github_run_source(args.repo, token)
        if args.pr_head is None:
            pull = actions.get_pull(args.repo, token, args.pr)
    else:
        raise RecipeSyncError("give --repo OWNER/NAME --pr N (online) or --from-dir DIR (offline)")
    head_sha, head_branch, head_repo, number, base_repo = _pull_fields(pull)
    pr_head = args.pr_head or head_sha
    if not pr_head:
        raise RecipeSyncError("the PR head SHA is unknown: pass --pr-head SHA")
    pr_number = args.pr if args.pr is not None else number
    globs: list[str] = args.job
    report = collect_evidence(
        source,
        pr_head_sha=pr_head,
        head_branch=args.head_branch or head_branch,
        pr_number=pr_number,
        head_repo=head_repo,
        repo=args.repo or base_repo,
        expected_argv=expected_argv_from_file(args.expected_argv) if args.expected_argv else None,
        blob_sha_at=git_blob_sha_at(args.bench_repo) if args.bench_repo is not None else None,
        script_path=args.script,
        policy=default_rules().policy,
        earlier_heads=tuple(args.earlier_head),
        job_filter=(
            (lambda job: any(fnmatch.fnmatchcase(job.raw, glob) for glob in globs))
            if globs
            else None
        ),
    )
    if args.json or output_format(args) == "json":
        write(args, json.dumps(report_as_json(report), indent=2) + "\n")
        return 0
    write(
        args,
        render_evidence_section(
            report,
            hardware_label=args.hardware_label or _hardware_label(report),
            changelog=_changelog(args, pr_head, pr_number),
            changelog_key=args.config_key,
        ),
    )
    return 0
