"""Clients for one repository with a token scoped to it (App mode) or the personal token.

A client heals its token once on a 401 (:meth:`TokenProvider.renew`) and follows a renamed
repository; the rename is written to the :class:`RenameBook` (the service's store), so every
later job, in any process, uses the new name from the start.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Protocol

from bot.github.auth import AppTokens, PersonalToken, TokenProvider
from bot.github.errors import CredentialsInvalid
from bot.github.gateway import GitHubRepo, Observer
from bot.settings import CredentialsMissing, Settings

log = logging.getLogger("recipe_sync.github")


class RenameBook(Protocol):
    def current_repo_name(self, name: str) -> str:
        """``name``, or what the repository it named was renamed to."""
        ...

    def record_rename(self, old: str, new: str) -> None: ...


class GitHubConnector:
    def __init__(
        self,
        settings: Settings,
        observer: Observer,
        *,
        tokens: TokenProvider | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        renames: RenameBook | None = None,
    ) -> None:
        self.settings = settings
        self.observer = observer
        self.renames = renames
        self._tokens = tokens
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()
        self._login: str | None = None

    def tokens(self) -> TokenProvider:
        """The credential source; raises CredentialsMissing (retryable) when none is set."""
        with self._lock:
            if self._tokens is None:
                self.settings.require_credentials()
                if self.settings.app_mode:
                    assert self.settings.private_key_path is not None
                    self._tokens = AppTokens.from_key_file(
                        self.settings.app_id,
                        self.settings.private_key_path,
                        self.settings.github_api_url,
                        on_call=self.observer.api_call,
                        sleep=self._sleep,
                    )
                else:
                    self._tokens = PersonalToken(self.settings.github_token)
            return self._tokens

    def credentials_problem(self) -> str | None:
        """Why the configured credentials cannot be used (``/readyz``); None when they can,
        or when none are configured yet (jobs wait for them)."""
        try:
            self.tokens()
        except CredentialsInvalid as err:
            return str(err)
        except CredentialsMissing:
            return None
        return None

    def forget_installation(self, installation_id: int | None) -> None:
        """Drop cached installation ids and tokens (an ``installation`` or
        ``installation_repositories`` delivery: the App was installed again, or its
        repositories changed). Other processes heal on their next 404 when minting."""
        with self._lock:
            tokens = self._tokens
        if tokens is not None:
            tokens.forget(installation_id)

    def repo(self, full_name: str, scope: Mapping[str, str]) -> GitHubRepo:
        """A client of ``full_name`` (followed to its current name if it was renamed)."""
        tokens = self.tokens()
        name = self.renames.current_repo_name(full_name) if self.renames else full_name
        token = tokens.token(name, scope)
        current = tokens.current_name(name)  # minting may have learned a rename
        if current != name:
            self.renamed(name, current)

        def renew() -> str:
            return tokens.renew(current, scope)

        return GitHubRepo(
            full_name,
            token,
            api_url=self.settings.github_api_url,
            observer=self.observer,
            sleep=self._sleep,
            clock=self._clock,
            seconds_between_writes=self.settings.seconds_between_writes,
            renew=renew,
            on_renamed=self.renamed,
            current_name=current,
        )

    def renamed(self, old: str, new: str) -> None:
        """GitHub answered for ``old`` as ``new``: remember it (store), say it once."""
        log.warning(
            "repository %s was renamed to %s: following it (update settings that name it)",
            old,
            new,
        )
        if self.renames is not None:
            self.renames.record_rename(old, new)

    def bot_login(self) -> str:
        """Who our comments and commits are by: the App's ``<slug>[bot]`` login
        (``RECIPE_SYNC_BOT_LOGIN``), or with a personal token its user (``GET /user``),
        so sticky comments are found by author in both modes."""
        tokens = self.tokens()
        if tokens.mode == "app":
            return self.settings.bot_login
        with self._lock:
            if self._login is None:
                # a personal token is not scoped: any repository name gives the same token
                repo = self.settings.recipes_repo
                github = GitHubRepo(
                    repo,
                    tokens.token(repo, {}),
                    api_url=self.settings.github_api_url,
                    observer=self.observer,
                    sleep=self._sleep,
                    clock=self._clock,
                )
                self._login = github.viewer_login()
            return self._login
