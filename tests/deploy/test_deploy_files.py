"""The deployment files agree with the code: compose's commands are real subcommands with
valid options, every setting they pass is one the service reads, and the shipped example
``.github/recipe-sync.yml`` is a valid repository policy that changes what it says."""

from __future__ import annotations

import re

from bot.commands.main import build_parser
from bot.rules import default_rules, repo_policy
from tests.deploy.stack import APP_SERVICES, ROOT, compose, env_example

SETTINGS = (ROOT / "bot" / "settings.py").read_text(encoding="utf-8")
READ = set(re.findall(r"\b(RECIPE_SYNC_[A-Z_]+|DATABASE_URL|REDIS_URL|GITHUB_TOKEN)\b", SETTINGS))
COMPOSE_ONLY = {"POSTGRES_PASSWORD", "RECIPE_SYNC_PORT"}  # interpolated by compose itself


def test_compose_commands_parse_as_recipe_sync_subcommands() -> None:
    services = compose()["services"]
    for name in APP_SERVICES:
        command = services[name]["command"]
        args = build_parser(command).parse_args(command)
        assert args.command == name and args.func is not None


def test_every_setting_compose_passes_is_read_by_the_service() -> None:
    passed = set(env_example()) | set(compose()["x-recipe-sync"]["environment"])
    assert passed - COMPOSE_ONLY <= READ, passed - COMPOSE_ONLY - READ
    assert "RECIPE_SYNC_WEBHOOK_SECRET" in passed and "RECIPE_SYNC_APP_ID" in passed


def test_the_example_repository_policy_loads_and_overrides() -> None:
    base = default_rules().policy
    text = (ROOT / "docs" / "examples" / ".github" / "recipe-sync.yml").read_text()
    policy = repo_policy(text, base)
    assert policy.dashboard is True and base.dashboard is False
    assert policy.pr.max_open == 5 and policy.pr.labels == base.pr.labels
    assert {t.minimum for t in policy.eval_thresholds} == {0.92}
