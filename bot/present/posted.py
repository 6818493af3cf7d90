"""Every byte recipe-sync posts, framed in one place: the hidden markers it finds its own
comments by, the typed metadata block, the alignment PR's footer and branch name, the length
limits, and the service's own comments. The engine's texts come from :mod:`bot.present`; the
service posts what it is given, and ``recipe-sync align`` writes the same bytes.

Untrusted text is made safe by :mod:`bot.markdown`; the metadata is machine state for the
bot's own bookkeeping and never used for authorisation (anyone can edit a body).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bot.markdown import MAX_BODY, inline, neutralize, truncate

__all__ = ["MAX_BODY"]

# --- limits (GitHub's, with a margin) --------------------------------------------------------

GITHUB_TITLE_MAX = 256  # characters of a pull request's or issue's title (GitHub: 422 past)
TITLE_LIMIT = 250  # an alignment PR's title as created
CHECK_TITLE_LIMIT = 255
CHECK_SUMMARY_LIMIT = 65_000  # GitHub: 65,535 characters
ANNOTATION_MAX_BYTES = 64 * 1024  # one annotation's message: GitHub's "64 KB", in bytes


# title suffixes of a retired alignment PR (retired_comment): closed with its branch, or
# left open because someone else committed to it
AUTOCLOSED = " — autoclosed"
ABANDONED = " — abandoned"


def suffixed_title(title: str, suffix: str) -> str:
    """``title`` ending in ``suffix`` (" — autoclosed"), within GitHub's 256 characters: the
    title gives way, never the suffix."""
    if title.endswith(suffix):
        return title[:GITHUB_TITLE_MAX]
    return title[: GITHUB_TITLE_MAX - len(suffix)] + suffix


# --- hidden markers and labels -----------------------------------------------------------

VERIFY_MARKER = "<!-- recipe-sync:verify v1 -->"
REAPPROVE_MARKER = "<!-- recipe-sync:reapprove v1 -->"
APPROVED_MARKER = "<!-- recipe-sync:approved v1 -->"
EDITED_MARKER = "<!-- recipe-sync:edited v1 -->"
REFUSAL_MARKER = "<!-- recipe-sync:refusal v1 -->"
RETIRED_MARKER = "<!-- recipe-sync:retired v1 -->"
DASHBOARD_MARKER = "<!-- recipe-sync:dashboard v1 -->"
REBASE_LABEL = "recipe-sync:rebase"  # on an alignment PR: regenerate it despite human edits

# --- the metadata block ----------------------------------------------------------------------

_META = re.compile(r"<!-- recipe-sync:meta (\{.*?\}) -->")


def meta_comment(data: dict[str, Any]) -> str:
    """Machine state in a hidden comment (keys sorted: the same state, the same bytes)."""
    payload = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    # '<' and '>' are escaped so the payload can never open or close a comment
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e")
    return f"<!-- recipe-sync:meta {payload} -->"


def parse_meta(body: str) -> dict[str, Any] | None:
    """The first metadata comment in ``body`` (it sits right after the marker line)."""
    match = _META.search(body[:4096])
    if not match:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class PullMeta:
    """The first line of an alignment PR body: what it aligns with what, and its content's
    fingerprint (a PR closed unmerged declines that content)."""

    source: str  # owner/name#N@head
    target: str  # the recipe file
    fingerprint: str
    branch: str | None = None  # None: written without a PR (no branch is pushed)

    def comment(self) -> str:
        data: dict[str, Any] = {
            "v": 1,
            "source": self.source,
            "target": self.target,
            "fingerprint": self.fingerprint,
        }
        if self.branch is not None:
            data["branch"] = self.branch
        return meta_comment(data)

    @staticmethod
    def fingerprint_of(body: str) -> str | None:
        """The fingerprint an alignment PR body was posted with (None: not one of ours)."""
        found = (parse_meta(body) or {}).get("fingerprint")
        return found if isinstance(found, str) else None


# --- the alignment branch ------------------------------------------------------------------

MAX_COMPONENT = 80
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def sanitize_component(text: str) -> str:
    """One ref component that always passes ``git check-ref-format --branch``: only
    ``[A-Za-z0-9._-]``, no ``..``, no leading ``.``/``-``, no trailing ``.``, no ``.lock``
    suffix, never empty."""
    part = _UNSAFE.sub("-", text)
    part = re.sub(r"\.{2,}", ".", part)
    part = re.sub(r"-{2,}", "-", part)
    part = part[:MAX_COMPONENT]
    part = part.lstrip(".-").rstrip(".")
    while part.endswith(".lock"):
        part = part[: -len(".lock")] + "-lock"
    return part.rstrip(".") or "x"


def recipe_slug(recipe_path: str) -> str:
    """``models/deepseek-ai/DeepSeek-R1.yaml`` → ``deepseek-ai-deepseek-r1`` (lower case,
    because branches differing only in case collide on case-insensitive file systems)."""
    stem = re.sub(r"\.ya?ml$", "", recipe_path)
    parts = [part for part in stem.split("/") if part]
    if parts and parts[0] == "models":
        parts = parts[1:]
    return sanitize_component("-".join(parts).lower())


def alignment_branch(prefix: str, bench_repo: str, pr_number: int, recipe_path: str) -> str:
    """``<prefix><benchmark-repo>-<pr>/<recipe-slug>`` (rules/policy.yaml ``branch_prefix``):
    one branch per (benchmark PR, recipe file)."""
    components = [sanitize_component(c) for c in prefix.strip("/").split("/") if c]
    repo_name = bench_repo.rsplit("/", 1)[-1]
    components.append(sanitize_component(f"{repo_name}-{pr_number}"))
    components.append(recipe_slug(recipe_path))
    return "/".join(components)


# --- the alignment PR body -------------------------------------------------------------------


def pull_request_footer(bench_ref: str, head_sha: str, command: str = "/recipe-sync") -> str:
    """Where the PR comes from, and every way to answer it (folded: a reviewer opens it when
    they want to act, and it is the only place the commands are listed)."""
    at = f" at `{head_sha[:12]}`" if head_sha else ""
    return (
        f"<sub>Generated by recipe-sync from {bench_ref}{at}. Close this PR to decline: the "
        f"same change is not proposed again. Add the `{REBASE_LABEL}` label to regenerate the "
        "branch (⚠️ custom changes will be lost).</sub>\n\n"
        "<details><summary>Commands</summary>\n\n"
        f"- `{command} drop FLAG`: leave a flag, an env var or `image` out of this PR\n"
        f"- `{command} add FLAG`: propose a setting listed as offered, not proposed\n"
        f"- `{command} keep FLAG`: undo a drop or an add (back to recipe-sync's estimate)\n"
        f"- the `{REBASE_LABEL}` label: regenerate the branch from the benchmark PR\n"
        "- closing the PR: decline this change\n\n"
        "</details>"
    )


def body_room(meta: PullMeta, footer: str, limit: int = MAX_BODY) -> int:
    """How long the text between the metadata line and the footer may be."""
    return limit - len(meta.comment()) - len(footer) - 16


def pull_request_body(meta: PullMeta, text: str, footer: str) -> str:
    """The body as posted: the metadata line, the (neutralised, capped) text, the footer."""
    return f"{meta.comment()}\n{text}\n\n---\n{footer}"


# --- what the service says about its own actions ---------------------------------------------

Action = Literal[
    "created",
    "updated",
    "unchanged",
    "declined",
    "edited",
    "deferred",
    "dry-run",
    "autoclosed",
    "abandoned",
    "gone",
    "duplicate",
]


@dataclass(frozen=True)
class AlignmentResult:
    """What the service did with one alignment PR (the comment and the check run list it)."""

    recipe_path: str
    branch: str
    action: Action
    pr_number: int | None = None
    html_url: str | None = None
    note: str = ""


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
    # the link is the other benchmark PR's alignment PR
    "duplicate": "the same recipe change is already proposed in",
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


def sticky_text(marker: str, body: str) -> str:
    """A sticky comment as posted: its marker line first (how the bot finds it again)."""
    return truncate(f"{marker}\n{body}")


def verify_comment(
    *,
    engine_comment: str,
    results: Sequence[AlignmentResult],
    recipes_repo: str,
    head_sha: str,
    dry_run: bool,
) -> str:
    """Body of the sticky verification comment (under :data:`VERIFY_MARKER`). Byte-identical
    when nothing changed, so it is only edited when its content changes: no timestamps, no
    run counters, only the head SHA."""
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


def edited_comment(commit_sha: str, author: str, bench_ref: str) -> str:
    """On an alignment PR whose branch has someone else's commits (:data:`EDITED_MARKER`)."""
    return (
        f"⚠️ recipe-sync stopped updating this branch: it has commits by someone else "
        f"(`{commit_sha[:12]}` by {neutralize(author)}). New alignments from "
        f"{bench_ref} are not pushed here.\n\n"
        f"To hand the branch back to recipe-sync, add the `{REBASE_LABEL}` label "
        "(⚠️ custom changes will be lost). To decline this change, close the PR."
    )


def retired_comment(reason: str, *, edited: bool) -> str:
    """On an alignment PR that no longer applies (:data:`RETIRED_MARKER`): left open when
    someone else committed to it, else closed with its branch."""
    if edited:
        return (
            f"recipe-sync no longer proposes this change: {reason}. The branch has commits "
            "by someone else, so it is left open; close it when it is no longer useful."
        )
    return (
        f"Closing: {reason}. recipe-sync opened this PR and nobody else committed to it, "
        "so its branch is deleted too."
    )


def reapproval_comment(approved: str | None, head: str, label: str, command: str) -> str:
    before = f" (approved `{approved[:12]}`, now `{head[:12]}`)" if approved else ""
    return (
        f"New commits were pushed to this fork pull request after it was approved{before}. "
        "recipe-sync does not read unapproved fork code, so it removed the "
        f"{inline(label)} label and did nothing else. A maintainer who has reviewed the new "
        f"head can approve it by applying the label again or by commenting "
        f"{inline(f'{command} {head[:12]}')}."
    )


def approved_comment(sha: str, reason: str, login: str, command: str) -> str:
    """The reply to a command that approved a head: which commit, and why that one."""
    why = {
        "named": "the commit the command names",
        "settled": "the head, pushed at least a minute before the command",
    }.get(reason, "the head")
    return (
        f"@{login} approved `{sha[:12]}` ({why}) for recipe-sync: it reads that commit only. "
        f"Later commits need a new approval ({inline(f'{command} <sha>')} or the label)."
    )


def not_approved_comment(head: str, named: str, reason: str, command: str) -> str:
    """The reply to a command that approved nothing on a fork PR."""
    again = inline(f"{command} {head[:12]}")
    if reason == "named-moved":
        what = (
            f"The command names `{named[:12]}`, but the head of this pull request is "
            f"`{head[:12]}`, so nothing was approved."
        )
    else:
        what = (
            f"The head of this fork pull request, `{head[:12]}`, was pushed less than a "
            f"minute before the {inline(command)} comment (or after it), so the comment may "
            "have been written for an earlier head: nothing was approved."
        )
    return (
        f"{what} recipe-sync does not read fork code nobody approved. A maintainer who has "
        f"reviewed `{head[:12]}` can approve it by commenting {again}."
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


def push_refused_comment(refusal: str) -> str:
    """The sticky comment when the recipes repository refused the bot's push: the one-line
    refusal (what, where, what to grant) and how to resume."""
    return (
        "recipe-sync could not publish its alignment: "
        + neutralize(refusal)
        + "\n\nOnce that is granted, comment the command again or re-run the check."
    )


# check run titles of the service's own outcomes
CHECK_FAILED_INPUT = "recipe-sync could not analyse this PR"
CHECK_SUPERSEDED = "Superseded"
CHECK_FAILED = "recipe-sync could not finish"
CHECK_PUSH_REFUSED = "recipe-sync may not push to the recipes repository"
RECHECK_TEXT = {"label": "Re-check", "description": "Run recipe-sync again on this head"}
