"""Where workflow runs, jobs and job logs come from: GitHub's REST API, or a saved copy.

:class:`RunSource` hands out GitHub's own JSON (the REST response bodies, unchanged), so the
collector reads only documented REST fields: runs (``id``, ``run_attempt``, ``head_sha``,
``head_branch``, ``head_repository.full_name``, ``pull_requests[].number``, ``status``,
``conclusion``, ``name``, ``path``, ``event``, ``html_url``, ``created_at``), attempts (the same
shape) and jobs (``id``, ``name``, ``status``, ``conclusion``, ``html_url``, ``runner_name``,
``head_sha``). ``bot/github/actions.py`` implements it against the API; :class:`DirRunSource`
reads a directory of saved responses (``recipe-sync evidence --from-dir``)::

    <dir>/runs.json                  GET /repos/{o}/{r}/actions/runs body ({"workflow_runs": [...]})
                                     or a bare JSON list of run objects
    <dir>/attempts/<run>-<n>.json    GET /repos/{o}/{r}/actions/runs/{run}/attempts/{n}
    <dir>/jobs/<run>-<n>.json        GET …/runs/{run}/attempts/{n}/jobs, all pages merged
                                     ({"jobs": [...]}) or a bare list
    <dir>/logs/<job_id>.txt          GET /repos/{o}/{r}/actions/jobs/{job_id}/logs (the text the
                                     302 points to); an absent file stands for 404/410 (expired)
    <dir>/pull.json                  optional: GET /repos/{o}/{r}/pulls/{n} (number, head.sha,
                                     head.ref, head.repo.full_name, base.repo.full_name)
    <dir>/perf-changelog.yaml        optional: the benchmark repo's changelog at the PR head
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from bot.errors import InputError, Location

MAX_LOG_BYTES = 512 * 1024 * 1024  # a saved log above this is refused rather than read whole


class RunSource(Protocol):
    """Workflow runs of a benchmark repository, as GitHub's REST JSON."""

    def workflow_runs(self, head_sha: str, head_branch: str | None) -> list[dict[str, Any]]:
        """Runs whose ``head_sha`` is ``head_sha`` and, when ``head_branch`` is given, also the
        runs of that branch (earlier pushes of the PR; fork PRs, whose runs carry an empty
        ``pull_requests``), each in its latest attempt's state. The collector decides which
        belong to the PR. REST: ``GET /repos/{o}/{r}/actions/runs?head_sha=…`` and
        ``?branch=…``, merged by ``id``, all pages."""
        ...

    def run_attempt(self, run_id: int, attempt: int) -> dict[str, Any] | None:
        """``GET /repos/{o}/{r}/actions/runs/{run_id}/attempts/{attempt}``; None on 404."""
        ...

    def jobs(self, run_id: int, attempt: int) -> list[dict[str, Any]]:
        """``GET …/actions/runs/{run_id}/attempts/{attempt}/jobs``, every page, job objects."""
        ...

    def job_log(self, job_id: int) -> str | None:
        """The job's log text (``GET …/actions/jobs/{job_id}/logs``, following the 302);
        None when GitHub answers 404/410 (never written, or expired)."""
        ...


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise InputError(
            Location(str(path), line=err.lineno), f"malformed JSON: {err.msg}"
        ) from err
    except UnicodeDecodeError as err:
        raise InputError(Location(str(path)), "file is not UTF-8") from err
    except OSError as err:
        raise InputError(Location(str(path)), f"cannot read file: {err.strerror}") from err


def _objects(data: Any, list_key: str, path: Path) -> list[dict[str, Any]]:
    items = data.get(list_key) if isinstance(data, dict) else data
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise InputError(
            Location(str(path), key=list_key),
            f"expected a list of objects (or {{'{list_key}': [...]}})",
        )
    return items


class DirRunSource:
    """A :class:`RunSource` over saved REST responses (layout in the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        if not (root / "runs.json").is_file():
            raise InputError(Location(str(root / "runs.json")), "no saved workflow runs here")
        self._runs = _objects(_load_json(root / "runs.json"), "workflow_runs", root / "runs.json")

    def workflow_runs(self, head_sha: str, head_branch: str | None) -> list[dict[str, Any]]:
        return [
            run
            for run in self._runs
            if run.get("head_sha") == head_sha
            or (head_branch is not None and run.get("head_branch") == head_branch)
        ]

    def run_attempt(self, run_id: int, attempt: int) -> dict[str, Any] | None:
        path = self.root / "attempts" / f"{run_id}-{attempt}.json"
        if not path.is_file():
            return None
        data = _load_json(path)
        if not isinstance(data, dict):
            raise InputError(Location(str(path)), "expected a workflow run object")
        return data

    def jobs(self, run_id: int, attempt: int) -> list[dict[str, Any]]:
        path = self.root / "jobs" / f"{run_id}-{attempt}.json"
        if not path.is_file():
            return []
        return _objects(_load_json(path), "jobs", path)

    def job_log(self, job_id: int) -> str | None:
        path = self.root / "logs" / f"{job_id}.txt"
        if not path.is_file():
            return None
        if path.stat().st_size > MAX_LOG_BYTES:
            raise InputError(Location(str(path)), "job log is too large to read")
        return path.read_bytes().decode("utf-8", "replace")

    def pull(self) -> dict[str, Any] | None:
        """The saved ``pull.json`` (REST pull request), if any."""
        path = self.root / "pull.json"
        if not path.is_file():
            return None
        data = _load_json(path)
        if not isinstance(data, dict):
            raise InputError(Location(str(path)), "expected a pull request object")
        return data
