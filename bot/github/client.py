"""The one HTTP client of the GitHub layer: githubkit's authentication on a pooled httpx client.

githubkit signs the App's JWT and sends tokens (``AppAuthStrategy`` / ``TokenAuthStrategy``);
its retry, HTTP cache and redirect following are off, because the measurement in
docs/github-client.md showed its defaults differ from GitHub's advice where it matters to a
worker (a secondary limit without headers is not retried, a 5xx write is repeated in place, a
600 s ``Retry-After`` is slept inline): :mod:`bot.github.ratelimit` decides, and the callers
see every answer, redirects included (a renamed repository is followed by id).
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import httpx
from githubkit import AppAuthStrategy, GitHub, TokenAuthStrategy
from githubkit.cache import MemCacheStrategy

API_VERSION = "2022-11-28"
USER_AGENT = "recipe-sync"
WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})
# where GitHub redirects a renamed repository's URLs: /repositories/ID/...
REPOSITORY_ID = re.compile(r"/repositories/(\d+)(?:/|$)")


class GitHubHTTP:
    """Requests to one GitHub API (``api_url``) with one credential."""

    def __init__(
        self,
        api_url: str,
        auth: AppAuthStrategy | TokenAuthStrategy,
        *,
        seconds_between_writes: float = 0.0,
        timeout: float = 30,
    ) -> None:
        # a cache per client: githubkit's default is process-wide, so two Apps' JWTs (or a
        # JWT signed by a replaced key) would be shared by issuer
        self.kit = GitHub(
            auth,
            base_url=api_url.rstrip("/") + "/",
            auto_retry=False,
            http_cache=False,
            follow_redirects=False,
            timeout=timeout,
            cache_strategy=MemCacheStrategy(),
        )
        self.http = httpx.Client(
            auth=self.kit.auth.get_auth_flow(self.kit),
            headers={
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": API_VERSION,
                "User-Agent": USER_AGENT,
            },
            timeout=timeout,
            follow_redirects=False,
        )
        self.api_url = api_url.rstrip("/")
        # GitHub's advice against secondary limits: at least a second between writes
        self._seconds_between_writes = seconds_between_writes
        self._last_write = 0.0
        self._lock = threading.Lock()

    def send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """One request (``url`` absolute, or a path under the API); any status is returned,
        a network failure raises :class:`httpx.HTTPError`."""
        if method.upper() in WRITES and self._seconds_between_writes > 0:
            self._space_writes()
        target = url if url.startswith(("http://", "https://")) else f"{self.api_url}{url}"
        return self.http.request(method, target, **kwargs)

    def _space_writes(self) -> None:
        with self._lock:
            wait = self._last_write + self._seconds_between_writes - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self._last_write = time.monotonic()

    def app_jwt(self) -> str:
        """The App's JWT (App auth only), for a route githubkit does not know needs it."""
        auth = self.kit.auth.get_auth_flow(self.kit)
        return str(auth.get_jwt())  # type: ignore[attr-defined]

    def close(self) -> None:
        self.http.close()


def message(response: httpx.Response) -> str:
    """GitHub's message, with the reasons of a 422 ("Validation Failed: Title is too long
    (maximum is 256 characters)")."""
    try:
        data = response.json()
    except ValueError:
        return response.text[:200]
    return json_message(data)


def json_message(data: Any) -> str:
    if not isinstance(data, dict):
        return str(data or "")
    text = str(data.get("message", ""))
    errors = data.get("errors")
    reasons = [
        str(e.get("message") or e.get("code") or "") if isinstance(e, dict) else str(e)
        for e in (errors if isinstance(errors, list) else [])
    ]
    reasons = [r for r in reasons if r]
    return f"{text}: {'; '.join(reasons)}"[:1000] if reasons else text
