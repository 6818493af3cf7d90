"""Service settings, read once from the environment.

Only ``RECIPE_SYNC_WEBHOOK_SECRET`` is needed to start ``recipe-sync serve``: the queue and
the state default to SQLite files in the data directory. GitHub credentials are checked when
a job needs them (:meth:`Settings.require_credentials`), so a server without them still
acknowledges deliveries and its jobs fail with one clear, retryable error.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot.errors import RecipeSyncError

# Empty: the built-in AlignEngine. ``module:attr`` loads an out-of-tree engine (a test double).
DEFAULT_ENGINE = ""
DEFAULT_API_URL = "https://api.github.com"
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class SettingsError(RecipeSyncError):
    """A setting is missing or malformed; the message names the variable."""


class CredentialsMissing(RecipeSyncError):
    """No GitHub credentials are configured (retryable: set them and the job succeeds)."""


@dataclass(frozen=True)
class Settings:
    webhook_secret: str = ""
    app_id: str = ""
    private_key_path: Path | None = None
    github_token: str = field(default="", repr=False)
    recipes_repo: str = "vllm-project/recipes"
    database_url: str = ""
    redis_url: str = ""
    data_dir: Path = Path(".recipe-sync")
    github_api_url: str = DEFAULT_API_URL
    bot_login: str = "recipe-sync[bot]"
    bot_email: str = ""
    engine: str = DEFAULT_ENGINE
    queue_name: str = "recipe-sync"
    # A sync whose heartbeat is older than this is presumed dead and re-enqueued.
    stale_after_seconds: float = 30.0
    heartbeat_seconds: float = 5.0
    # GitHub asks integrations to wait >= 1 s between writes; tests set 0.
    seconds_between_writes: float = 1.0
    rules_dir: Path | None = None
    # where this service is reachable (https://…): the dashboard issue links its HTML report
    # at <public_url>/dashboards/<owner>/<name>.html; empty: no link
    public_url: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env

        def get(name: str, default: str = "") -> str:
            return env.get(name, default).strip()

        data_dir = Path(get("RECIPE_SYNC_DATA_DIR") or _default_data_dir(env)).expanduser()
        key_path = get("RECIPE_SYNC_PRIVATE_KEY_PATH")
        settings = cls(
            webhook_secret=env.get("RECIPE_SYNC_WEBHOOK_SECRET", ""),
            app_id=get("RECIPE_SYNC_APP_ID"),
            private_key_path=Path(key_path).expanduser() if key_path else None,
            github_token=get("GITHUB_TOKEN"),
            recipes_repo=get("RECIPE_SYNC_RECIPES_REPO", "vllm-project/recipes"),
            database_url=get("DATABASE_URL"),
            redis_url=get("REDIS_URL"),
            data_dir=data_dir,
            github_api_url=get("RECIPE_SYNC_GITHUB_API_URL", DEFAULT_API_URL).rstrip("/"),
            bot_login=get("RECIPE_SYNC_BOT_LOGIN", "recipe-sync[bot]"),
            bot_email=get("RECIPE_SYNC_BOT_EMAIL"),
            engine=get("RECIPE_SYNC_ENGINE", DEFAULT_ENGINE),
            queue_name=get("RECIPE_SYNC_QUEUE_NAME", "recipe-sync"),
            stale_after_seconds=_number(env, "RECIPE_SYNC_STALE_AFTER", 30.0),
            heartbeat_seconds=_number(env, "RECIPE_SYNC_HEARTBEAT", 5.0),
            seconds_between_writes=_number(env, "RECIPE_SYNC_SECONDS_BETWEEN_WRITES", 1.0),
            public_url=get("RECIPE_SYNC_PUBLIC_URL").rstrip("/"),
            rules_dir=Path(get("RECIPE_SYNC_RULES")) if get("RECIPE_SYNC_RULES") else None,
        )
        settings.validate()
        return settings

    def validate(self) -> None:
        if not _REPO.match(self.recipes_repo):
            raise SettingsError(
                f"RECIPE_SYNC_RECIPES_REPO must be 'owner/name', got '{self.recipes_repo}'"
            )
        if bool(self.app_id) != bool(self.private_key_path):
            raise SettingsError(
                "GitHub App mode needs both RECIPE_SYNC_APP_ID and RECIPE_SYNC_PRIVATE_KEY_PATH"
            )
        if self.private_key_path and not self.private_key_path.is_file():
            raise SettingsError(
                f"RECIPE_SYNC_PRIVATE_KEY_PATH: no such file '{self.private_key_path}'"
            )
        if not self.github_api_url.startswith(("http://", "https://")):
            raise SettingsError("RECIPE_SYNC_GITHUB_API_URL must be an http(s) URL")
        if self.engine and ":" not in self.engine:
            raise SettingsError(f"RECIPE_SYNC_ENGINE must be 'module:attr', got '{self.engine}'")
        if self.heartbeat_seconds <= 0 or self.stale_after_seconds <= self.heartbeat_seconds:
            raise SettingsError(
                "RECIPE_SYNC_STALE_AFTER must be greater than RECIPE_SYNC_HEARTBEAT (> 0)"
            )

    def require_webhook_secret(self) -> str:
        if not self.webhook_secret:
            raise SettingsError(
                "RECIPE_SYNC_WEBHOOK_SECRET is not set: the webhook endpoint cannot verify "
                "deliveries without the secret configured on the GitHub App"
            )
        return self.webhook_secret

    @property
    def app_mode(self) -> bool:
        return bool(self.app_id)

    def require_credentials(self) -> None:
        if not (self.app_mode or self.github_token):
            raise CredentialsMissing(
                "no GitHub credentials: set RECIPE_SYNC_APP_ID and RECIPE_SYNC_PRIVATE_KEY_PATH "
                "(GitHub App) or GITHUB_TOKEN (personal token); the job stays retryable"
            )

    @property
    def effective_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.data_dir / 'recipe-sync.db'}"


def _default_data_dir(env: Mapping[str, str]) -> str:
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return str(Path(base) / "recipe-sync")


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError as err:
        raise SettingsError(f"{name} must be a number of seconds, got '{raw}'") from err
