"""Workflow-run evidence from GitHub Actions (implements the engine's ``RunSource``).

``workflow_runs`` matches runs by head SHA and, when given, head branch: runs of fork PRs
carry an empty ``pull_requests`` list (actions/runner#3444), so the branch + SHA pair is the
only link. Job logs answer 302 with a pre-signed storage URL; it is fetched without our
token. Missing or expired logs (404/410) are ``None``, not errors.
"""

from __future__ import annotations

import os
from typing import Any

from bot.github.errors import GitHubRequestError
from bot.github.gateway import GitHubRepo


class GitHubRunSource:
    def __init__(self, gh: GitHubRepo) -> None:
        self.gh = gh

    def workflow_runs(self, head_sha: str, head_branch: str | None) -> list[dict[str, Any]]:
        """Runs at ``head_sha`` plus, with ``head_branch``, the branch's runs (earlier pushes of
        the PR and fork runs, whose ``pull_requests`` is empty), merged by id; the evidence
        collector decides which belong to the PR."""
        merged: dict[int, dict[str, Any]] = {}
        queries = [{"head_sha": head_sha}]
        if head_branch:
            queries.append({"branch": head_branch})
        for params in queries:
            for run in self.gh.get_pages(
                "list workflow runs", "/actions/runs", "workflow_runs", params
            ):
                if run.get("head_sha") == head_sha or (
                    head_branch is not None and run.get("head_branch") == head_branch
                ):
                    merged.setdefault(int(run["id"]), run)
        return [merged[run_id] for run_id in sorted(merged)]

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


def _repo(repo: str, token: str) -> GitHubRepo:
    from bot.settings import DEFAULT_API_URL

    api_url = os.environ.get("RECIPE_SYNC_GITHUB_API_URL", DEFAULT_API_URL)
    return GitHubRepo(repo, token, api_url=api_url)


def run_source(repo: str, token: str) -> GitHubRunSource:
    """The RunSource of ``recipe-sync evidence --repo``, with a personal token."""
    return GitHubRunSource(_repo(repo, token))


def get_pull(repo: str, token: str, number: int) -> dict[str, Any]:
    """``GET /repos/{repo}/pulls/{number}`` as JSON."""
    data = _repo(repo, token).get_json("get pull request", f"/pulls/{number}")
    return data if isinstance(data, dict) else {}
