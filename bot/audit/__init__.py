"""Whole-corpus drift audit: every vLLM config point of a benchmark repository against the
recipe rendering it corresponds to (issue #9).

>>> run = run_audit(DirectorySource(Path("bench")), DirectorySource(Path("recipes")), rules)
>>> print(render_markdown(run.report))   # or render_html(run.report), run.report.to_json()

Rows carry a status ``aligned | drifted (n) | unmapped (reason) | unresolved (what)``; keys of
other frameworks and multi-node keys are listed as out of scope with their reason.
"""

from __future__ import annotations

from bot.audit.html import render_html
from bot.audit.markdown import render_markdown
from bot.audit.model import AuditReport, AuditRow, FlagRow, OutOfScope, Status
from bot.audit.run import Auditor, AuditRun, run_audit

__all__ = [
    "AuditReport",
    "AuditRow",
    "AuditRun",
    "Auditor",
    "FlagRow",
    "OutOfScope",
    "Status",
    "render_html",
    "render_markdown",
    "run_audit",
]
