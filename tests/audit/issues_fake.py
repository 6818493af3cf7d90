"""The service tests' fake GitHub plus the issue endpoints the dashboard uses.

Issues share the number space with pull requests and are listed with them (a pull request
carries ``pull_request``), as on GitHub. Tokens are held to the permission table of
``tests/service/github_permissions.py`` like every other request of the fake; bodies over
65,536 characters are refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from tests.service.fakegithub import FakeGitHub

MAX_BODY = 65_536


class IssuesFakeGitHub(FakeGitHub):
    def __init__(self, root: Path, **kwargs: Any) -> None:
        self.issues: dict[str, dict[int, dict[str, Any]]] = {}
        super().__init__(root, **kwargs)

    def add_issue(self, repo: str, title: str, body: str, user: str, state: str = "open") -> int:
        with self.lock:
            numbers = [*self.pulls.get(repo, {}), *self.issues.get(repo, {})]
            number = max(numbers, default=0) + 1
            self.issues.setdefault(repo, {})[number] = {
                "number": number,
                "title": title,
                "body": body,
                "user": user,
                "state": state,
                "id": self.next_id(),
            }
            return number

    def issues_of(self, repo: str, user: str | None = None) -> list[dict[str, Any]]:
        found = self.issues.get(repo, {}).values()
        return [i for i in found if user is None or i["user"] == user]

    def issue_json(self, repo: str, issue: dict[str, Any]) -> dict[str, Any]:
        number = issue["number"]
        url = f"{self.base_url}/repos/{repo}/issues/{number}"
        return {
            "id": issue["id"],
            "node_id": "I_fake",
            "url": url,
            "repository_url": f"{self.base_url}/repos/{repo}",
            "comments_url": f"{url}/comments",
            "html_url": f"https://github.com/{repo}/issues/{number}",
            "number": number,
            "state": issue["state"],
            "title": issue["title"],
            "body": issue["body"],
            "user": self.user_json(issue["user"]),
            "labels": [],
            "labels_url": f"{url}/labels{{/name}}",
            "events_url": f"{url}/events",
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "locked": False,
            "comments": 0,
            "author_association": "NONE",
            "closed_at": None if issue["state"] == "open" else "2026-01-02T00:00:00Z",
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
        }

    def _build_app(self) -> FastAPI:
        app = super()._build_app()
        fake = self

        def not_found() -> JSONResponse:
            return JSONResponse({"message": "Not Found"}, status_code=404)

        def too_long() -> JSONResponse:
            return JSONResponse(
                {
                    "message": "Validation Failed",
                    "errors": [{"message": "body is too long (maximum is 65536 characters)"}],
                },
                status_code=422,
            )

        @app.get("/repos/{owner}/{name}/issues")
        def list_issues(owner: str, name: str, request: Request) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            state = request.query_params.get("state", "open")
            creator = request.query_params.get("creator")
            items = [fake.issue_json(full, i) for i in fake.issues.get(full, {}).values()]
            for number, pr in fake.pulls.get(full, {}).items():
                pull = fake.pull_json(full, number)
                # listed as an issue: the issue's fields, with its pull_request link
                as_issue = {"number": number, "title": pr["title"], "body": pr["body"],
                            "user": pr["user"], "state": pr["state"], "id": pr["id"]}  # fmt: skip
                items.append(
                    {**fake.issue_json(full, as_issue), "pull_request": {"url": pull["url"]}}
                )
            items = [
                i
                for i in sorted(items, key=lambda i: -int(i["number"]))
                if (state == "all" or i["state"] == state)
                and (creator is None or i["user"]["login"] == creator)
            ]
            chunk, links = fake.page(request, items)  # GitHub's Link header, as for every list
            return JSONResponse(chunk, headers=links)

        @app.post("/repos/{owner}/{name}/issues")
        async def create_issue(owner: str, name: str, request: Request) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            data = await request.json()
            if len(data.get("body") or "") > MAX_BODY:
                return too_long()
            number = fake.add_issue(full, data["title"], data.get("body") or "", info.login)
            return JSONResponse(fake.issue_json(full, fake.issues[full][number]), status_code=201)

        @app.api_route("/repos/{owner}/{name}/issues/{number:int}", methods=["GET", "PATCH"])
        async def one_issue(owner: str, name: str, number: int, request: Request) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            issue = fake.issues.get(full, {}).get(number)
            if issue is None:
                return not_found()
            if request.method == "PATCH":
                data = await request.json()
                if len(data.get("body") or "") > MAX_BODY:
                    return too_long()
                for key in ("title", "body", "state"):
                    if key in data:
                        issue[key] = data[key]
            return JSONResponse(fake.issue_json(full, issue))

        return app
