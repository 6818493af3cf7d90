"""A planned edit as the gate and the revert guard see it, for tests that need no recipe."""

from __future__ import annotations

from bot.align.model import PlannedEdit
from bot.recipes.edit import SetScalar


def planned_edit(
    kind: str, subject: str, node: str, before: str | None, after: str, target: str
) -> PlannedEdit:
    """An edit setting ``node`` to ``after`` for ``subject``, demanded by profile ``target``."""
    return PlannedEdit(
        edit=SetScalar(path=tuple(node.split(".")), value=after),
        kind=kind,  # type: ignore[arg-type]
        subject=subject,
        before=before,
        after=after,
        node=node,
        scope="",
        reason="",
        placement="",
        targets=(target,),
    )
