"""Runtime evidence: the workflow runs that verified a benchmark PR.

Pure parsers over job-log text (:mod:`~bot.evidence.jobname`, :mod:`~bot.evidence.launch`,
:mod:`~bot.evidence.lmeval`, :mod:`~bot.evidence.changelog`) and over downloaded artifacts
(:mod:`~bot.evidence.artifacts`), a collector that reads runs,
attempts, jobs and logs through a :class:`~bot.evidence.source.RunSource`
(:func:`~bot.evidence.collect.collect_evidence`), and the Markdown section of the alignment PR
and verification comment (:func:`~bot.evidence.render.render_evidence_section`). Fetching is
never done here: ``bot/github/actions.py`` implements ``RunSource`` against the API.
"""

from __future__ import annotations

from bot.evidence.artifacts import (
    AggEvalRow,
    parse_agg_eval,
    parse_command_file,
    parse_lm_eval_results,
)
from bot.evidence.changelog import ChangelogEntry, entries_for_key, parse_perf_changelog
from bot.evidence.collect import collect_evidence
from bot.evidence.jobname import JobName, parse_job_name
from bot.evidence.launch import LaunchLine, find_launch_lines, preferred_launch
from bot.evidence.lmeval import EvalRow, Verdict, parse_eval_tables, parse_verdicts
from bot.evidence.model import BlobCheck, EvalFigure, Evidence, EvidenceReport, report_as_json
from bot.evidence.render import render_evidence_section
from bot.evidence.source import DirRunSource, RunSource

__all__ = [
    "AggEvalRow",
    "BlobCheck",
    "ChangelogEntry",
    "DirRunSource",
    "EvalFigure",
    "EvalRow",
    "Evidence",
    "EvidenceReport",
    "JobName",
    "LaunchLine",
    "RunSource",
    "Verdict",
    "collect_evidence",
    "entries_for_key",
    "find_launch_lines",
    "parse_agg_eval",
    "parse_command_file",
    "parse_eval_tables",
    "parse_job_name",
    "parse_lm_eval_results",
    "parse_perf_changelog",
    "parse_verdicts",
    "preferred_launch",
    "render_evidence_section",
    "report_as_json",
]
