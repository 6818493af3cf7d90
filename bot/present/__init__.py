"""An alignment result as text: the PR title and body, the verification comment, the check
run and its annotations, and plan.json."""

from bot.present.report import plan_json, present
from bot.present.texts import AlignTexts, CheckRun, PullRequestText

__all__ = ["AlignTexts", "CheckRun", "PullRequestText", "plan_json", "present"]
