"""Prometheus metrics of one process (web and/or worker), in their own registry."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.deliveries = Counter(
            "recipe_sync_webhook_deliveries",
            "Webhook deliveries by event and outcome "
            "(accepted, duplicate, ignored, unauthorized, bad_request, unavailable)",
            ["event", "outcome"],
            registry=self.registry,
        )
        self.ack_seconds = Histogram(
            "recipe_sync_webhook_ack_seconds",
            "Time from request to acknowledgement of a webhook delivery",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=self.registry,
        )
        self.jobs = Histogram(
            "recipe_sync_job_seconds",
            "Job durations by job and outcome",
            ["job", "outcome"],
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600),
            registry=self.registry,
        )
        self.api_calls = Counter(
            "recipe_sync_github_api_calls",
            "GitHub API calls by operation and outcome (ok, HTTP status, network-error)",
            ["operation", "outcome"],
            registry=self.registry,
        )
        self.api_errors = Counter(
            "recipe_sync_github_api_errors",
            "GitHub API calls that failed, by operation",
            ["operation"],
            registry=self.registry,
        )
        self.credentials_invalid = Gauge(
            "recipe_sync_credentials_invalid",
            "1 while the configured GitHub credentials cannot be used (see /readyz)",
            registry=self.registry,
        )
        self.outages = Counter(
            "recipe_sync_backend_outages",
            "Times the database or the queue became unreachable, by backend",
            ["backend"],
            registry=self.registry,
        )
        self.rate_limit_waits = Counter(
            "recipe_sync_github_rate_limit_waits",
            "Waits before retrying a GitHub call, by reason",
            ["reason"],
            registry=self.registry,
        )
        self.rate_limit_wait_seconds = Counter(
            "recipe_sync_github_rate_limit_wait_seconds",
            "Seconds waited before retrying GitHub calls, by reason",
            ["reason"],
            registry=self.registry,
        )

    # the GitHub gateway's Observer protocol
    def api_call(self, operation: str, outcome: str) -> None:
        self.api_calls.labels(operation, outcome).inc()
        if outcome != "ok":
            self.api_errors.labels(operation).inc()

    def rate_limit_wait(self, reason: str, seconds: float) -> None:
        self.rate_limit_waits.labels(reason).inc()
        self.rate_limit_wait_seconds.labels(reason).inc(seconds)

    def value(self, name: str, labels: dict[str, str] | None = None) -> float:
        return self.registry.get_sample_value(name, labels or {}) or 0.0

    def render(self) -> bytes:
        return generate_latest(self.registry)
