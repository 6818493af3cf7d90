"""Test doubles of the alignment engine (the real one is bot.service.engine, built elsewhere).

:class:`DeterministicTestEngine` reads every ``benchmarks/**.sh`` of the PR head that
differs from the base, takes the recipe named by its ``# recipe: <path>`` line and the
``--flag value`` pairs of its launch line, and rewrites the value line that follows
``- "--flag"`` in the recipe; each ``# guide: <text>`` line is appended to it as a comment.
Same input, same bytes out: fingerprints are stable.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

from bot.contract import Annotation, RecipeChange, SyncOutcome, SyncRequest, edits_digest
from bot.markdown import neutralize
from bot.present.posted import (
    PullMeta,
    alignment_branch,
    pull_request_body,
    pull_request_footer,
)
from bot.rules import default_rules
from bot.sources import read_text

FLAG = re.compile(r"(--[a-z0-9-]+)[ =]+([^\s\\]+)")


class DeterministicTestEngine:
    calls = 0

    def sync(self, request: SyncRequest) -> SyncOutcome:
        type(self).calls += 1
        runs = (
            request.runs.workflow_runs(request.head_sha, request.head_branch)
            if request.runs
            else []
        )
        changes: list[RecipeChange] = []
        aligned: list[str] = []
        annotations: list[Annotation] = []
        rows: list[str] = []
        for script in request.bench.iter_files("benchmarks"):
            if not script.endswith(".sh"):
                continue
            text = read_text(request.bench, script)
            if request.bench_base.exists(script) and read_text(request.bench_base, script) == text:
                continue
            recipe_match = re.search(r"^# recipe: (\S+)$", text, re.M)
            if not recipe_match or not request.recipes.exists(recipe_match.group(1)):
                continue
            recipe_path = recipe_match.group(1)
            recipe = read_text(request.recipes, recipe_path)
            lines = recipe.splitlines(keepends=True)
            edits: list[tuple[str, str]] = []  # (the flag's value node, the new value)
            for number, line in enumerate(text.splitlines(), start=1):
                for flag, value in FLAG.findall(line):
                    for index, rline in enumerate(lines[:-1]):
                        if rline.strip() == f'- "{flag}"':
                            current = lines[index + 1].strip().removeprefix("- ").strip('"')
                            if current != value:
                                indent = lines[index + 1][
                                    : len(lines[index + 1]) - len(lines[index + 1].lstrip())
                                ]
                                lines[index + 1] = f'{indent}- "{value}"\n'
                                edits.append((f"extra_args[{index + 1}]", value))
                                rows.append(f"| `{flag}` | `{current}` | `{value}` |")
                                annotations.append(
                                    Annotation(
                                        script,
                                        number,
                                        number,
                                        "warning",
                                        f"{flag} {value} differs from the recipe ({current})",
                                        f"{flag} drifted",
                                    )
                                )
            new = "".join(lines)
            # a "# guide: <text>" line stands for content that is no YAML edit (a guide
            # section): it changes the fingerprint, not the edits digest
            for guide in re.findall(r"^# guide: (.+)$", text, re.M):
                new += f"# {guide}\n"
            owner = re.search(r"^# owner: (.+)$", text, re.M)
            if new == recipe:
                aligned.append(recipe_path)
                continue
            source = f"{request.bench_repo}#{request.pr_number}"
            text = (
                f"Aligns `{recipe_path}` with {source}.\n\n"
                "| Flag | Recipe (before) | Benchmark (after) |\n|---|---|---|\n"
                + "\n".join(rows)
                + (f"\n\nScript owner: {owner.group(1)}" if owner else "")
            )
            fingerprint = hashlib.sha256(recipe_path.encode() + b"\0" + new.encode()).hexdigest()
            # framed as the real engine frames it (bot.present.posted): the service posts it
            meta = PullMeta(
                f"{source}@{request.head_sha}",
                recipe_path,
                fingerprint,
                alignment_branch(
                    (request.policy or default_rules().policy).branch_prefix,
                    request.bench_repo,
                    request.pr_number,
                    recipe_path,
                ),
            )
            footer = pull_request_footer(source, request.head_sha)
            changes.append(
                RecipeChange(
                    recipe_path=recipe_path,
                    files={recipe_path: new.encode()},
                    title=f"[recipe-sync] Align {recipe_path}",
                    body=pull_request_body(meta, neutralize(text), footer),
                    commit_message=f"Align {recipe_path} with {source}",
                    fingerprint=fingerprint,
                    edits_digest=edits_digest(edits),
                )
            )
        if changes:
            conclusion, title = "action_required", f"{len(annotations)} flag(s) differ"
        elif aligned:
            conclusion, title = "success", "recipes aligned"
        else:
            conclusion, title = "neutral", "no recipe touched"
        comment = (
            f"### recipe-sync verification\n\n{title}.\n\n"
            + ("\n".join(["| Flag | Recipe | Benchmark |", "|---|---|---|", *rows]) if rows else "")
            + f"\n\nWorkflow runs at this head: {len(runs)}."
        )
        return SyncOutcome(
            changes=tuple(changes),
            aligned=tuple(aligned),
            comment=comment,
            check_conclusion=conclusion,
            check_title=title,
            check_summary=f"{title}; {len(runs)} workflow run(s) cited.",
            annotations=tuple(annotations),
        )


class SlowTestEngine(DeterministicTestEngine):
    """Signals it started (a file) and then blocks for ``RECIPE_SYNC_TEST_ENGINE_SLEEP``
    seconds: the window in which a test kills the worker."""

    def sync(self, request: SyncRequest) -> SyncOutcome:
        marker = os.environ.get("RECIPE_SYNC_TEST_ENGINE_MARKER")
        if marker:
            Path(marker).write_text(request.head_sha)
        time.sleep(float(os.environ.get("RECIPE_SYNC_TEST_ENGINE_SLEEP", "0")))
        return super().sync(request)
