"""What a starting ``serve`` or ``worker`` process says about itself: one log line with its
mode (GitHub App, personal token or no credentials yet), address and backends, so a
deployment's first log line answers "which database, which queue, which GitHub?"."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from bot.settings import Settings


def hide_password(url: str) -> str:
    """``scheme://user:***@host/…``: a URL as it may be logged."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))


def github_mode(settings: Settings) -> str:
    if settings.app_mode:
        return f"GitHub App {settings.app_id} at {settings.github_api_url}"
    if settings.github_token:
        return f"personal token at {settings.github_api_url}"
    return "no GitHub credentials yet (jobs wait for them; /readyz answers 503)"


def backends(settings: Settings) -> str:
    queue = (
        f"Redis {hide_password(settings.redis_url)}"
        if settings.redis_url
        else f"SQLite {settings.data_dir / 'queue.db'}"
    )
    return (
        f"database {hide_password(settings.effective_database_url)}; "
        f"queue {queue} ('{settings.queue_name}'); data {settings.data_dir}"
    )


def serve_line(settings: Settings, host: str, port: int, processes: int, jobs: str) -> str:
    """``serve``'s first line: where it listens, as what, on which backends, who runs jobs."""
    web = f"{processes} processes" if processes > 1 else "1 process"
    return (
        f"serve: listening on http://{host}:{port} ({web}); {github_mode(settings)}; "
        f"{backends(settings)}; jobs {jobs}"
    )


def worker_line(settings: Settings, threads: int, metrics_port: int | None) -> str:
    metrics = f"; metrics on :{metrics_port}/metrics" if metrics_port else ""
    return f"worker: {threads} job threads; {github_mode(settings)}; {backends(settings)}{metrics}"
