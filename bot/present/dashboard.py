"""The drift dashboard issue's own text: what it is, how its boxes act, and the box grammar
the service reads back (a box is identified by its hidden comment, so the visible words may
change without losing a maintainer's tick). The audit under it is rendered by
:func:`bot.audit.markdown.render_markdown`; the service composes the two."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from bot.markdown import inline
from bot.present.posted import DASHBOARD_MARKER
from bot.words import count

ACTION = re.compile(
    r"^- \[(?P<mark>[ xX])\] <!-- recipe-sync:(?P<verb>rerun|ignore) (?P<recipe>\S+)"
    r"(?: (?P<flag>\S+))? -->",
    re.MULTILINE,
)
SAFE = re.compile(r"^[A-Za-z0-9_./-]+$")  # what may sit inside a box's hidden comment
IGNORE_OFFERED = 5  # drifting flags offered as "ignore" boxes per recipe

INTRO = (
    "This issue is kept up to date by recipe-sync after each sync and nightly: every "
    "vLLM configuration of this repository's default branch compared with the recipe "
    "it corresponds to. Tick a box under a recipe to re-run its alignment or to ignore a "
    "flag for it (recorded, honoured by the dashboard and by alignment PRs until "
    "unticked). Each drifted entry names the benchmark PRs that introduced it and the "
    "`recipe-sync align` command that plans its recipe edit (run it in checkouts of both "
    "repositories). Turn the issue off with `dashboard: false` in the recipe-sync "
    "policy.\n\n"
)


def dashboard_head() -> str:
    """The marker the service finds the issue by, then what it is and how to answer it."""
    return f"{DASHBOARD_MARKER}\n{INTRO}"


@dataclass(frozen=True)
class BoxAction:
    """One checkbox of the dashboard: re-run a recipe's alignment, or ignore one flag."""

    verb: Literal["rerun", "ignore"]
    recipe: str
    flag: str
    checked: bool


def parse_actions(body: str) -> list[BoxAction]:
    """The checkboxes of a dashboard body (a box is identified by its hidden comment)."""
    found = []
    for match in ACTION.finditer(body):
        verb: Literal["rerun", "ignore"] = "rerun" if match.group("verb") == "rerun" else "ignore"
        found.append(
            BoxAction(
                verb,
                match.group("recipe"),
                match.group("flag") or "",
                match.group("mark") != " ",
            )
        )
    return found


def box_lines(
    recipe: str,
    *,
    drifted: bool,
    ignored: Iterable[str],
    drifting: Sequence[tuple[str, int]],
) -> list[str]:
    """Renovate-style boxes under one recipe: tick to act; the next refresh unticks
    "re-run" once done. ``drifting``: (flag, config keys it drifts in), most first."""
    if not SAFE.match(recipe):
        return []
    lines = []
    if drifted:
        lines.append(
            f"- [ ] <!-- recipe-sync:rerun {recipe} --> re-run the alignment of this recipe "
            "(its benchmark PRs with an open alignment PR are synced again)"
        )
    already = sorted(ignored)
    for flag in already:
        lines.append(
            f"- [x] <!-- recipe-sync:ignore {recipe} {flag} --> ignore {inline(flag)} for this "
            "recipe (untick to count it again)"
        )
    offered = [(f, n) for f, n in drifting if f not in already and SAFE.match(f)]
    for flag, keys in offered[:IGNORE_OFFERED]:
        lines.append(
            f"- [ ] <!-- recipe-sync:ignore {recipe} {flag} --> ignore {inline(flag)} for this "
            f"recipe (drifts in {count(keys, 'config key')})"
        )
    return lines
