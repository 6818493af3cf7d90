"""Candidates that would undo a maintainer: not proposed (issue #31, docs/alignment.md §5c).

A setting a maintainer removed from the recipe file, or changed away from the value the
candidate sets, within the last 30 days (:mod:`bot.recipes.withdrawals`) is left out and
listed with the commit that did it. The settings of one flag go or stay together, as in the
adoption gate. A maintainer can still ask for it (``/recipe-sync add``, ``align --include``).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace

from bot.align.confidence import flag_root
from bot.align.model import PlannedEdit
from bot.recipes.withdrawals import History, Withdrawal
from bot.vllm.pairs import canonical_value, flag_pairs
from bot.vllm.superseded import Superseded

# edits that set a launch setting (a variant's skeleton or a verification mark reverts nothing)
SETTING_KINDS = frozenset({"flag", "flag-new", "env", "env-new", "image"})


@dataclass(frozen=True)
class Reverts:
    kept: tuple[PlannedEdit, ...]
    # one (flag root, line) per withheld subject: what and which commit
    withheld: tuple[tuple[str, str], ...]
    note: str | None  # what could not be checked, and why

    def lines(self, roots: frozenset[str] | set[str]) -> list[str]:
        """The lines of the withheld subjects among ``roots``."""
        return [line for root, line in self.withheld if root in roots]


def withhold_reverts(
    edits: Sequence[PlannedEdit],
    history: History | None,
    included: frozenset[str],
    superseded: Sequence[Superseded] = (),
) -> Reverts:
    """``superseded``: deprecated fields vLLM reads as another (rules/vllm-defaults.yaml):
    removing ``use_trtllm_ragged_deepseek_prefill=True`` withdrew the MLA prefill backend."""
    settings = [e for e in edits if e.kind in SETTING_KINDS]
    if history is None or not history.known:
        why = history.why if history is not None else "no recipes history was given"
        note = (
            f"settings maintainers removed in the last 30 days were not checked: {why}"
            if settings
            else None
        )
        return Reverts(tuple(edits), (), note)
    withdrawals = [_as_meant(w, superseded) for w in history.withdrawals]
    undone: dict[str, tuple[PlannedEdit, Withdrawal]] = {}
    for edit in settings:
        root = flag_root(edit.subject)
        if root in included or edit.subject in included or root in undone:
            continue
        value = _value(edit)
        found = next((w for w in withdrawals if w.reverted_by(edit.subject, value)), None)
        if found is not None:
            undone[root] = (edit, found)
    kept = tuple(e for e in edits if flag_root(e.subject) not in undone)
    withheld = tuple(
        (
            root,
            f"{_named(edit, edits)}: not proposed, it would undo a recent change: {found.words()}",
        )
        for root, (edit, found) in undone.items()
    )
    return Reverts(kept, withheld, None)


def _named(edit: PlannedEdit, edits: Sequence[PlannedEdit]) -> str:
    """The subject, and the other fields of its flag that stay out with it."""
    root = flag_root(edit.subject)
    others = sorted({e.subject for e in edits if flag_root(e.subject) == root} - {edit.subject})
    return (
        f"{edit.subject} (with {', '.join(others)}, of the same flag)" if others else edit.subject
    )


def _value(edit: PlannedEdit) -> str | None:
    """The edit's value as a leaf spells it (None: the edit removes the setting). A new flag's
    edit text is the flag with its value (``--moe-backend aiter``)."""
    if edit.after is None:
        return None
    if edit.after.startswith("--"):
        pairs = dict(flag_pairs(shlex.split(edit.after)))
        if edit.subject in pairs:
            return pairs[edit.subject]
    return canonical_value(edit.after)


def _as_meant(withdrawal: Withdrawal, superseded: Sequence[Superseded]) -> Withdrawal:
    """A withdrawn deprecated field as the setting vLLM read it as (unchanged otherwise)."""
    leaf = withdrawal.leaf
    for rule in superseded:
        if leaf.subject == f"{rule.flag}.{rule.name}" and rule.applies(leaf.value):
            meant = replace(leaf, subject=f"{rule.flag}.{rule.means}", value=rule.value)
            spelled = f"{rule.name}={leaf.value}"
            return replace(withdrawal, leaf=meant, spelled=spelled)
    return withdrawal
