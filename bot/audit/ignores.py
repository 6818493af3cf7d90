"""Flags a maintainer ignored for a recipe file (the dashboard issue's checkboxes).

An ignored flag stays visible on its row, marked ``ignored``, but no longer counts as drift;
a row whose only drift was ignored reads ``aligned`` with a note saying what was ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from bot.audit.model import AuditReport, AuditRow

Ignored = Mapping[str, frozenset[str]]  # recipe path → flags


def apply_ignores(report: AuditReport, ignored: Ignored) -> AuditReport:
    if not ignored:
        return report
    return replace(report, rows=tuple(_row(row, ignored) for row in report.rows))


def _row(row: AuditRow, ignored: Ignored) -> AuditRow:
    flags = ignored.get(row.recipe_file, frozenset())
    if row.status != "drifted" or not flags:
        return row
    hit = [f.flag for f in row.flags if f.drift and f.flag in flags]
    if not hit:
        return row
    new_flags = tuple(
        replace(f, drift=False, verdict="ignored") if f.flag in flags and f.drift else f
        for f in row.flags
    )
    still = any(f.drift for f in new_flags)
    note = f"ignored on the dashboard: {', '.join(hit)}"
    return replace(
        row, flags=new_flags, status="drifted" if still else "aligned", notes=(*row.notes, note)
    )
