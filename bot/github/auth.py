"""GitHub credentials: an App (JWT → installation token) or a personal token (local use).

App mode mints installation tokens scoped to ONE repository and to the permissions the
caller asks for (least privilege per call, docs/spec/bot-conventions.md §4.8), caches them and
mints a
new one five minutes before expiry (tokens live one hour). The private key is read once from
``RECIPE_SYNC_PRIVATE_KEY_PATH`` and never logged.

The cache heals: a 404 when minting (the App was uninstalled and installed again: a new
installation id) drops the cached id and looks it up once more, ``installation`` /
``installation_repositories`` deliveries call :meth:`AppTokens.forget`, and a 401 to a cached
token (revoked, the App uninstalled) makes :class:`bot.github.gateway.GitHubRepo` call
:meth:`AppTokens.renew` once: the installation's id and tokens are dropped and looked up
again, so an uninstalled App or a repository removed from the installation is reported as
such (:class:`AppNotInstalled`), not as "401 Bad credentials". A renamed repository
answers the installation lookup with a redirect to ``/repositories/ID``: it is followed,
the token is minted by id and its new name learned (:meth:`AppTokens.current_name`). A rate-limited
answer (403/429 with ``Retry-After``, a secondary-limit message or an exhausted primary
limit) is waited out as :mod:`bot.github.ratelimit` says, inline when short, otherwise the
job is retried after the wait; any other 403 stays permanent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Protocol

import httpx
from githubkit import AppAuthStrategy

from bot.github.client import REPOSITORY_ID, GitHubHTTP, message
from bot.github.errors import (
    AppNotInstalled,
    CredentialsInvalid,
    GitHubRequestError,
    TransientGitHubError,
)
from bot.github.ratelimit import MAX_ATTEMPTS, rate_limit_wait

REFRESH_MARGIN = 300.0  # seconds before expiry at which a cached token is replaced


class TokenProvider(Protocol):
    mode: str  # "app" | "token"

    def token(self, repo: str, permissions: Mapping[str, str]) -> str: ...

    def renew(self, repo: str, permissions: Mapping[str, str]) -> str:
        """A fresh token after GitHub answered 401 to the cached one (revoked, or the App
        uninstalled): the installation's cached id and tokens are dropped first."""
        ...

    def current_name(self, repo: str) -> str:
        """``repo``'s name now, when minting learned that it was renamed."""
        ...

    def forget(self, installation_id: int | None = None) -> None: ...


@dataclass
class PersonalToken:
    """``GITHUB_TOKEN``: one token for everything (whatever it was granted)."""

    value: str = field(repr=False)
    mode: str = "token"

    def token(self, repo: str, permissions: Mapping[str, str]) -> str:
        return self.value

    def renew(self, repo: str, permissions: Mapping[str, str]) -> str:
        return self.value  # nothing to renew: a second 401 is the operator's to fix

    def current_name(self, repo: str) -> str:
        return repo

    def forget(self, installation_id: int | None = None) -> None:
        pass  # nothing cached


def check_private_key(key: str, where: str) -> None:
    """Raise :class:`CredentialsInvalid` (never echoing the key) unless ``key`` is a PEM RSA
    private key that can sign the App's RS256 JWT."""
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        parsed = load_pem_private_key(key.encode("utf-8"), password=None)
    except Exception as err:  # ValueError, TypeError, cryptography's UnsupportedAlgorithm
        kind = type(err).__name__
        raise CredentialsInvalid(f"{where}: not a usable PEM private key ({kind})") from None
    if not isinstance(parsed, RSAPrivateKey):
        raise CredentialsInvalid(f"{where}: the App key must be an RSA private key")


@dataclass(frozen=True)
class _Cached:
    value: str
    expires_at: float


class AppTokens:
    """Installation tokens per (repository, permissions), cached until shortly before expiry."""

    mode = "app"

    def __init__(
        self,
        app_id: str,
        private_key: str,
        api_url: str,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        on_call: Callable[[str, str], None] | None = None,
        max_inline_wait: float = 120.0,
    ) -> None:
        self.app_id = app_id
        self.api_url = api_url.rstrip("/")
        # githubkit signs the JWT (RS256, issued a minute back against clock drift, 10
        # minutes long) and re-signs it before it expires
        self._github = GitHubHTTP(self.api_url, AppAuthStrategy(app_id, private_key))
        self._clock = clock
        self._sleep = sleep
        self.max_inline_wait = max_inline_wait
        self._on_call = on_call or (lambda operation, outcome: None)
        self._lock = threading.Lock()
        self._installations: dict[str, int] = {}
        self._moved: dict[str, int] = {}  # a renamed repository's id (from GitHub's redirect)
        self._renamed: dict[str, str] = {}  # old name → the name minting returned
        self._tokens: dict[tuple[int, str, tuple[tuple[str, str], ...]], _Cached] = {}
        self.minted = 0  # tokens minted (observable in tests)

    @classmethod
    def from_key_file(
        cls,
        app_id: str,
        key_path: Path,
        api_url: str,
        on_call: Callable[[str, str], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> AppTokens:
        try:
            key = key_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            reason = getattr(err, "strerror", None) or "not UTF-8 text"
            raise CredentialsInvalid(
                f"RECIPE_SYNC_PRIVATE_KEY_PATH {key_path}: cannot read the key: {reason}"
            ) from None
        check_private_key(key, f"RECIPE_SYNC_PRIVATE_KEY_PATH {key_path}")
        return cls(app_id, key, api_url, on_call=on_call, sleep=sleep)

    def _request(self, method: str, path: str, **kwargs: object) -> httpx.Response:
        """One App-authenticated request; rate limits waited out, 5xx/429 transient."""
        attempt = 1
        while True:
            response = self._send(method, path, **kwargs)
            status = response.status_code
            if status in (403, 429):
                headers = {k.lower(): v for k, v in response.headers.items()}
                wait = rate_limit_wait(status, headers, message(response), attempt, self._clock())
                if wait is not None:
                    if attempt >= MAX_ATTEMPTS or wait.seconds > self.max_inline_wait:
                        raise TransientGitHubError(
                            f"{method} {path}: {wait.reason}, retry in {wait.seconds:.0f} s",
                            retry_after=wait.seconds,
                        )
                    self._sleep(wait.seconds)
                    attempt += 1
                    continue
            if status >= 500 or status == 429:
                raise TransientGitHubError(
                    f"{method} {path}: HTTP {status}", retry_after=_retry_after(response)
                )
            return response

    def _send(self, method: str, path: str, **kwargs: object) -> httpx.Response:
        if path.startswith("/repositories/"):
            # a renamed repository's installation, by id: githubkit's list of the routes
            # that take the App's JWT names only /repos/{owner}/{repo}/installation
            kwargs = {
                **kwargs,
                "headers": {"Authorization": f"Bearer {self._github.app_jwt()}"},
                "auth": None,
            }
        try:
            response = self._github.send(method, path, **kwargs)
        except httpx.HTTPError as err:
            self._on_call("app auth", "network-error")
            raise TransientGitHubError(f"GitHub unreachable for {method} {path}: {err}") from err
        ok = response.status_code < 300
        self._on_call("app auth", "ok" if ok else str(response.status_code))
        return response

    def installation_id(self, repo: str) -> int:
        cached = self._installations.get(repo)
        if cached is not None:
            return cached
        response = self._request("GET", f"/repos/{repo}/installation")
        if response.status_code in (301, 302, 307):  # renamed: GitHub redirects by id
            response = self._follow_rename(repo, response)
        if response.status_code == 404:
            raise AppNotInstalled(
                f"the GitHub App is not installed on {repo} (uninstalled, or the repository "
                "was removed from its installation, or deleted)"
            )
        if response.status_code != 200:
            raise GitHubRequestError("get installation", response.status_code, message(response))
        installation = int(response.json()["id"])
        self._installations[repo] = installation
        return installation

    def _follow_rename(self, repo: str, response: httpx.Response) -> httpx.Response:
        """A renamed repository answers ``/repos/OLD/...`` with a redirect to
        ``/repositories/ID/...``: follow it, and mint by that id from now on."""
        location = response.headers.get("location", "")
        found = REPOSITORY_ID.search(location)
        if found is None:
            raise GitHubRequestError(
                "get installation", response.status_code, f"redirected to {location!r}"
            )
        self._moved[repo] = int(found.group(1))
        return self._request("GET", f"/repositories/{found.group(1)}/installation")

    def current_name(self, repo: str) -> str:
        return self._renamed.get(repo, repo)

    def _learn_name(self, repo: str, minted: Mapping[str, object]) -> None:
        """The token's one repository, as GitHub names it now (a renamed one differs)."""
        repositories = minted.get("repositories")
        if isinstance(repositories, list) and len(repositories) == 1:
            first = repositories[0]
            name = first.get("full_name") if isinstance(first, dict) else None
            if isinstance(name, str) and name.lower() != repo.lower():
                self._renamed[repo] = name

    def renew(self, repo: str, permissions: Mapping[str, str]) -> str:
        with self._lock:
            installation = self._installations.get(repo)
            if installation is not None:
                self._forget(installation)
            else:
                self._tokens = {k: v for k, v in self._tokens.items() if k[1] != repo}
        return self.token(repo, permissions)

    def forget(self, installation_id: int | None = None) -> None:
        """Drop the cached installation ids and tokens of ``installation_id`` (None: all),
        after GitHub said it changed (installed again, repositories added or removed)."""
        with self._lock:
            self._forget(installation_id)

    def _forget(self, installation_id: int | None) -> None:
        self._installations = {
            repo: found
            for repo, found in self._installations.items()
            if installation_id is not None and found != installation_id
        }
        self._tokens = {
            key: cached
            for key, cached in self._tokens.items()
            if installation_id is not None and key[0] != installation_id
        }

    def token(self, repo: str, permissions: Mapping[str, str]) -> str:
        scope = tuple(sorted(permissions.items()))
        with self._lock:
            for looked_up in (False, True):
                installation = self.installation_id(repo)
                key = (installation, repo, scope)
                cached = self._tokens.get(key)
                if cached and cached.expires_at - REFRESH_MARGIN > self._clock():
                    return cached.value
                moved = self._moved.get(repo)
                which = (
                    {"repository_ids": [moved]}
                    if moved is not None
                    else {"repositories": [repo.split("/", 1)[1]]}
                )
                response = self._request(
                    "POST",
                    f"/app/installations/{installation}/access_tokens",
                    json={**which, "permissions": dict(scope)},
                )
                if response.status_code == 404 and not looked_up:
                    # the cached installation is gone (uninstalled, installed again)
                    self._forget(installation)
                    continue
                if response.status_code == 422 and _NOT_ACCESSIBLE in message(response):
                    raise AppNotInstalled(
                        f"{repo} is not among the repositories the GitHub App's installation "
                        f"{installation} may access (removed from it, or deleted)"
                    )
                if response.status_code != 201:
                    raise GitHubRequestError(
                        "create installation token", response.status_code, message(response)
                    )
                body = response.json()
                self._learn_name(repo, body)
                expires = datetime.fromisoformat(str(body["expires_at"]).replace("Z", "+00:00"))
                self._tokens[key] = _Cached(str(body["token"]), expires.timestamp())
                self.minted += 1
                return str(body["token"])
        raise AssertionError("unreachable: the second attempt returns or raises")


_NOT_ACCESSIBLE = "not accessible to the parent installation"  # GitHub's 422 when minting


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return float(value) if value else None
    except ValueError:
        return None
