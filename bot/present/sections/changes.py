"""The change table: what the alignment PR changes, old → new, one row per setting and the
renderings that take it. The PR body shows it at the top of its summary and the reviewer
comment shows the same rows, followed by the differences the PR leaves unedited, so the two
never disagree about what changes."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot import markdown as md
from bot.align.nodes import bench_value_text
from bot.align.plan import AlignmentPlan, PlannedEdit
from bot.present.sections.common import code, plain, short_image
from bot.present.sections.values import (
    KIND_ORDER,
    SummaryContext,
    image_shown,
    new_value,
    old_value,
    value_only,
)
from bot.vllm import FlagDiff

HEAD = ("| Setting | Where | Old | New |", "|---|---|---|---|")
NONE = "—"  # a cell with no value: the setting is new, or removed
SKIPPED_SHOWN = 20  # reasons the comment lists under "Not edited"


@dataclass(frozen=True)
class ChangeRow:
    """One row, its cells Markdown."""

    setting: str
    where: str
    old: str
    new: str

    def line(self) -> str:
        cells = (self.setting, self.where, self.old, self.new)
        return "| " + " | ".join(md.cell(c) for c in cells) + " |"


def scope_words(edit: PlannedEdit, ctx: SummaryContext) -> str:
    """Who takes the edit, in hardware words: ``variant default on MI355X`` is ``MI355X
    only`` for a recipe with no other variant."""
    scope = edit.scope
    if scope.startswith("variant ") and ctx.names.recipes[ctx.plan.recipe_path].variants <= 1:
        _, _, where = scope.partition(" on ")
        scope = f"{where} only" if where else "every rendering of the recipe"
    return scope[:1].upper() + scope[1:]


_STRATEGY_SCOPE = re.compile(r"(?P<where>.+) \+ (?P<strategy>\S+) only")


def merged_scope(scopes: list[str]) -> str:
    """One scope for an edit made alike in several places: ``B300 + single_node_tp only``
    and ``B300 + single_node_tep only`` are ``B300 + single_node_tp, single_node_tep only``;
    scopes of other shapes are listed."""
    if len(scopes) == 1:
        return scopes[0]
    found = [_STRATEGY_SCOPE.fullmatch(s) for s in scopes]
    if not all(found):
        return "; ".join(scopes)
    by_where: dict[str, list[str]] = {}
    for match in found:
        assert match is not None
        by_where.setdefault(match.group("where"), []).append(match.group("strategy"))
    # hardware with the same strategies share one clause: ``B200, B300 + tp, tep only``
    by_strategies: dict[tuple[str, ...], list[str]] = {}
    for where, strategies in by_where.items():
        by_strategies.setdefault(tuple(strategies), []).append(where)
    return "; ".join(
        f"{', '.join(wheres)} + {', '.join(strategies)} only"
        for strategies, wheres in by_strategies.items()
    )


def _setting(edit: PlannedEdit) -> str:
    if edit.kind == "image":
        return "image"
    if edit.kind == "variant":
        return f"variant {code(edit.subject)}"
    if edit.kind == "tp":
        return "TP"
    return code(edit.subject)


def _cells(edit: PlannedEdit, ctx: SummaryContext) -> tuple[str, str]:
    """(old, new) of one edit: the values alone (the setting has its own column)."""
    if edit.kind == "flag-remove":
        return code(edit.before or edit.subject), NONE
    old, new = old_value(edit, ctx.plan), new_value(edit)
    if edit.kind == "image":
        # the tags when the repository stays, the new one short: in full in the bullet below
        shown = image_shown(new, old) if old is not None else new
        old, new = (image_shown(old, new) if old is not None else None), short_image(shown)
    return (
        code(value_only(edit.subject, old)) if old is not None else NONE,
        code(value_only(edit.subject, new)),
    )


def change_rows(ctx: SummaryContext) -> list[ChangeRow]:
    """Every setting the plan edits, the image first; an edit made alike at several nodes (the
    same flag for single_node_tp and _tep of a sweep) is one row naming every scope. The
    verification is no setting: its bullet cites the run."""
    scopes: dict[tuple[str, str, str], list[str]] = {}
    edits = [e for e in ctx.plan.edits if e.kind != "verified"]
    for edit in sorted(edits, key=lambda e: KIND_ORDER.index(e.kind)):
        scopes.setdefault((_setting(edit), *_cells(edit, ctx)), []).append(scope_words(edit, ctx))
    return [
        ChangeRow(setting, plain(merged_scope(list(dict.fromkeys(where)))), old, new)
        for (setting, old, new), where in scopes.items()
    ]


def edit_for(plan: AlignmentPlan, diff: FlagDiff) -> PlannedEdit | None:
    """The edit that carries the difference ``diff`` into the recipe (None: not edited)."""
    return next((e for e in plan.edits if e.subject == diff.flag or _sets_field(e, diff)), None)


def _sets_field(edit: PlannedEdit, diff: FlagDiff) -> bool:
    """``edit`` writes a whole JSON (``--compilation-config {…}``) that gives the field
    ``diff`` is about (``--compilation-config.mode``) the benchmark's value."""
    if edit.kind not in ("flag", "flag-new") or not diff.flag.startswith(edit.subject + "."):
        return False
    text = edit.after or ""
    if text.startswith("-"):  # a new override: the flag, then its value
        text = text.partition(" ")[2]
    try:
        value: Any = json.loads(text)
    except ValueError:
        return False
    for key in diff.flag[len(edit.subject) + 1 :].split("."):
        if not isinstance(value, dict) or key not in value:
            return False
        value = value[key]
    return bool(value == diff.bench_value)


def unedited(plan: AlignmentPlan) -> list[FlagDiff]:
    """The differences this benchmark PR introduced that the alignment PR does not edit
    (offered, dropped, skipped); older drift is said apart."""
    older = {(note.kind, note.subject) for note in plan.preexisting}
    found: dict[tuple[str, str, tuple[str, ...], tuple[str, ...]], FlagDiff] = {}
    for target in plan.targets:
        for diff in target.comparison.drift:
            if (diff.kind, diff.flag) in older or edit_for(plan, diff) is not None:
                continue
            found.setdefault((diff.kind, diff.flag, diff.bench_tokens, diff.recipe_tokens), diff)
    return list(found.values())


def _diff_value(diff: FlagDiff, tokens: Sequence[str], value: Any) -> str | None:
    """One side's value of a difference without its name (``ERROR`` of
    ``AITER_TRITON_LOG_LEVEL=ERROR``, ``aiter`` of ``--moe-backend aiter``); a field of a
    JSON flag (``--compilation-config.mode``) its own value, not the whole JSON."""
    if not tokens:
        return None
    if diff.kind == "flag" and "." in diff.flag:
        if value is None:
            return None
        return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    text = " ".join(tokens)
    if diff.kind == "env":
        return text.removeprefix(f"{diff.flag}=")
    return value_only(diff.flag, text)


def _unedited_row(plan: AlignmentPlan, diff: FlagDiff) -> ChangeRow:
    # offered as itself, or inside a whole JSON of its flag (#2476: `--attention-config {…}`)
    offered = any(e.subject == diff.flag or _sets_field(e, diff) for e in plan.offered)
    skipped = next((s for s in plan.not_edited[:SKIPPED_SHOWN] if diff.flag in s), None)
    if offered:
        why = "not edited: offered, not proposed"
    elif skipped is not None:
        why = "not edited (why below)"  # the comment lists plan.not_edited under "Not edited"
    else:
        why = "not edited"
    old = _diff_value(diff, diff.recipe_tokens, diff.recipe_value)
    new = _diff_value(diff, diff.bench_tokens, diff.bench_value)
    if diff.benchmark_only_keys and isinstance(diff.bench_value, dict) and new is not None:
        # the value a tick would write: the synthetic-acceptance keys never go into a recipe
        # (#2522's row showed them beside an offer without them)
        new = bench_value_text(diff)
    return ChangeRow(code(diff.flag), why, code(old) if old else NONE, code(new) if new else NONE)


def change_table(ctx: SummaryContext, *, with_unedited: bool = False) -> list[str]:
    """The table's lines ([] when there is no row): the PR's changes, and with
    ``with_unedited`` the differences it leaves (the reviewer comment), their benchmark
    value in the New column."""
    rows = change_rows(ctx)
    if with_unedited:
        rows += [_unedited_row(ctx.plan, diff) for diff in unedited(ctx.plan)]
    return [*HEAD, *(row.line() for row in rows)] if rows else []
