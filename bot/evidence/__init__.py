"""Runtime evidence: the workflow runs that verified a benchmark PR.

Pure parsers over job-log text (:mod:`~bot.evidence.jobname`, :mod:`~bot.evidence.launch`,
:mod:`~bot.evidence.lmeval`) and over downloaded artifacts (:mod:`~bot.evidence.artifacts`),
and a collector that reads runs, attempts, jobs and logs through a
:class:`~bot.evidence.source.RunSource` (:func:`~bot.evidence.collect.collect_evidence`).
Its Markdown section is :func:`bot.present.evidence.render_evidence_section`. Fetching is
never done here: ``bot/github/actions.py`` implements ``RunSource`` against the API.
"""

from __future__ import annotations

from bot.evidence.artifacts import (
    AggEvalRow,
    parse_agg_eval,
    parse_command_file,
    parse_lm_eval_results,
)
from bot.evidence.collect import collect_evidence
from bot.evidence.jobname import JobName, parse_job_name
from bot.evidence.launch import LoggedLaunch, find_launch_lines, preferred_launch
from bot.evidence.lmeval import EvalRow, EvalVerdict, parse_eval_tables, parse_verdicts
from bot.evidence.model import BlobCheck, EvalFigure, Evidence, EvidenceReport, report_as_json
from bot.evidence.source import DirRunSource, RunSource

__all__ = [
    "AggEvalRow",
    "BlobCheck",
    "DirRunSource",
    "EvalFigure",
    "EvalRow",
    "EvalVerdict",
    "Evidence",
    "EvidenceReport",
    "JobName",
    "LoggedLaunch",
    "RunSource",
    "collect_evidence",
    "find_launch_lines",
    "parse_agg_eval",
    "parse_command_file",
    "parse_eval_tables",
    "parse_job_name",
    "parse_lm_eval_results",
    "parse_verdicts",
    "preferred_launch",
    "report_as_json",
]
