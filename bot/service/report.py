"""Text the service adds around the engine's output (pure).

The verification comment must be byte-identical when nothing changed, so that it is only
edited when its content changes: no timestamps, no run counters, only the head SHA.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.github.sanitize import inline, meta_comment, neutralize
from bot.service.pulls import AlignmentResult

# What the comment says is the PR's state, not what this run did to it, so a re-run that
# changes nothing leaves the comment byte-identical (and unedited).
_ACTION_TEXT = {
    "created": "proposed in",
    "updated": "proposed in",
    "unchanged": "proposed in",
    "declined": "not proposed again",
    "edited": "left alone (edited by someone else)",
    "deferred": "deferred",
    "dry-run": "dry run",
    "autoclosed": "closed as obsolete",
    "abandoned": "obsolete, left open (edited by someone else)",
    "gone": "already closed",
}


def alignment_lines(results: Sequence[AlignmentResult], recipes_repo: str) -> list[str]:
    lines = []
    for result in results:
        link = (
            f"[{recipes_repo}#{result.pr_number}]({result.html_url})"
            if result.pr_number and result.html_url
            else inline(result.branch)
        )
        note = f": {neutralize(result.note)}" if result.note else ""
        lines.append(f"- {inline(result.recipe_path)} — {_ACTION_TEXT[result.action]} {link}{note}")
    return lines


def verify_comment(
    *,
    engine_comment: str,
    results: Sequence[AlignmentResult],
    recipes_repo: str,
    head_sha: str,
    dry_run: bool,
) -> str:
    """Body of the sticky verification comment (the marker is added by the publisher)."""
    meta = meta_comment(
        {
            "v": 1,
            "head": head_sha,
            "dry_run": dry_run,
            "alignments": sorted(r.pr_number for r in results if r.pr_number),
        }
    )
    parts = [meta, neutralize(engine_comment).strip()]
    lines = alignment_lines(results, recipes_repo)
    if lines:
        parts.append("**Alignment PRs**\n" + "\n".join(lines))
    mode = " · dry run: nothing was pushed" if dry_run else ""
    parts.append(f"<sub>recipe-sync · head `{head_sha[:12]}`{mode}</sub>")
    return "\n\n".join(p for p in parts if p)


def check_summary(
    engine_summary: str, results: Sequence[AlignmentResult], recipes_repo: str
) -> str:
    lines = alignment_lines(results, recipes_repo)
    extra = "\n\n**Alignment PRs**\n" + "\n".join(lines) if lines else ""
    return neutralize(engine_summary).strip() + extra


def reapproval_comment(approved: str | None, head: str, label: str, command: str) -> str:
    before = f" (approved `{approved[:12]}`, now `{head[:12]}`)" if approved else ""
    return (
        f"New commits were pushed to this fork pull request after it was approved{before}. "
        "recipe-sync does not read unapproved fork code, so it removed the "
        f"{inline(label)} label and did nothing else. A maintainer can approve the new head "
        f"by applying the label again or by commenting {inline(command)}."
    )


def refusal_comment(login: str, command: str, *, starts_sync: bool = True) -> str:
    what = (
        "so recipe-sync did not start. A maintainer can run it for you (or apply the trigger "
        "label)."
        if starts_sync
        else "so nothing was recorded. A maintainer can run it for you."
    )
    return (
        f"Thanks for the request, @{login}! Only people with write access to this "
        f"repository can run {inline(command)}, {what} I will not repeat this note."
    )


def failure_comment(error: str) -> str:
    return (
        "recipe-sync could not analyse this pull request:\n\n"
        + neutralize(error)
        + "\n\nFix the input named above and push, or comment the command again."
    )
