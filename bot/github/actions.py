"""Workflow-run evidence from GitHub Actions (implements the engine's ``RunSource``).

``workflow_runs`` matches runs by head SHA and, when given, head branch: runs of fork PRs
carry an empty ``pull_requests`` list (actions/runner#3444), so the branch + SHA pair is the
only link. Job logs answer 302 with a pre-signed storage URL; it is fetched without our
token. Missing or expired logs (404/410) are ``None``, not errors.
"""

from __future__ import annotations

from typing import Any

from bot.github.errors import GitHubRequestError
from bot.github.gateway import GitHubRepo


class GitHubRunSource:
    def __init__(self, gh: GitHubRepo) -> None:
        self.gh = gh

    def workflow_runs(self, head_sha: str, head_branch: str | None) -> list[dict[str, Any]]:
        runs = self.gh.get_pages(
            "list workflow runs", "/actions/runs", "workflow_runs", {"head_sha": head_sha}
        )
        return [
            run
            for run in runs
            if run.get("head_sha") == head_sha
            and (head_branch is None or run.get("head_branch") == head_branch)
        ]

    def run_attempt(self, run_id: int, attempt: int) -> dict[str, Any] | None:
        try:
            data = self.gh.get_json("get run attempt", f"/actions/runs/{run_id}/attempts/{attempt}")
        except GitHubRequestError as err:
            if err.status == 404:
                return None
            raise
        return data if isinstance(data, dict) else None

    def jobs(self, run_id: int, attempt: int) -> list[dict[str, Any]]:
        return self.gh.get_pages(
            "list jobs", f"/actions/runs/{run_id}/attempts/{attempt}/jobs", "jobs"
        )

    def job_log(self, job_id: int) -> str | None:
        location = self.gh.redirect_location("download job log", f"/actions/jobs/{job_id}/logs")
        if location is None:
            return None
        return self.gh.download_text(location)
