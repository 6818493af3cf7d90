"""Pure parts of the service: signatures, classification, sanitising, names, policies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.contract import (
    Annotation,
    EngineContractError,
    EngineUnavailable,
    RecipeChange,
    SyncOutcome,
    check_outcome,
    load_engine,
)
from bot.github.ratelimit import rate_limit_wait, transient_wait
from bot.github.signature import sign, verify
from bot.service.checks import batches
from bot.service.events import (
    AddHunk,
    CheckRunRequested,
    DropHunk,
    Event,
    Ignored,
    InstallationChanged,
    KeepHunk,
    LabelAdded,
    PullClosed,
    PullUpdated,
    SyncCommand,
    WorkflowRunCompleted,
    event_from_json,
    event_json,
)
from bot.service.intake import CHECK_NAME, PayloadError, classify
from bot.settings import CredentialsMissing, Settings, SettingsError
from tests.shared import github_data_dir

DATA = github_data_dir()


def payload(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def run(event: str, body: Any) -> Event | Ignored:
    return classify(
        event,
        body,
        trigger_label="recipe-sync",
        comment_command="/recipe-sync",
        bot_login="recipe-sync[bot]",
    )


# --- signatures ------------------------------------------------------------------------------


def test_signature_matches_githubs_documented_test_vector() -> None:
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert sign("It's a Secret to Everybody", b"Hello, World!") == expected
    assert verify("It's a Secret to Everybody", b"Hello, World!", expected)


@pytest.mark.parametrize(
    "header",
    [None, "", "sha1=abc", "sha256=", "sha256=" + "0" * 64, sign("other secret", b"Hello, World!")],
)
def test_bad_signatures_are_rejected(header: str | None) -> None:
    assert not verify("It's a Secret to Everybody", b"Hello, World!", header)
    assert not verify("", b"Hello, World!", sign("", b"Hello, World!"))  # no secret: never


# --- classification (real payloads) ----------------------------------------------------------


def test_label_event_for_the_trigger_label_only() -> None:
    body = payload("pull_request.labeled.json")
    assert run("pull_request", body) == Ignored("another label")
    body["label"]["name"] = "recipe-sync"
    trigger = run("pull_request", body)
    assert isinstance(trigger, LabelAdded)
    assert (trigger.kind, trigger.repo, trigger.pr_number, trigger.sender) == (
        "label_added",
        "Codertocat/Hello-World",
        2,
        "Codertocat",
    )
    assert trigger.head_sha == "ec26c3e57ca3a959ca5aad62de7213c562f8c821" and not trigger.is_fork
    assert event_from_json(event_json(trigger)) == trigger


def test_synchronize_counts_only_on_a_labelled_pr_and_detects_forks() -> None:
    body = payload("pull_request.synchronize.json")
    assert isinstance(run("pull_request", body), Ignored)
    body["pull_request"]["labels"].append({"name": "recipe-sync"})
    body["pull_request"]["head"]["repo"]["full_name"] = "someone/Hello-World"
    trigger = run("pull_request", body)
    assert isinstance(trigger, PullUpdated) and trigger.kind == "pr_updated" and trigger.is_fork


def test_closed_events_carry_merged() -> None:
    unmerged = run("pull_request", payload("pull_request.closed.json"))
    merged = run("pull_request", payload("pull_request.closed.merged.json"))
    assert isinstance(unmerged, PullClosed) and unmerged.kind == "pr_closed" and not unmerged.merged
    assert isinstance(merged, PullClosed) and merged.merged


def test_comment_commands() -> None:
    assert run("issue_comment", payload("issue_comment.created.json")) == Ignored(
        "comment on an issue, not a pull request"
    )
    body = payload("issue_comment.created.pull_request.json")
    assert run("issue_comment", body) == Ignored("comment is not a command")
    body["comment"]["body"] = "/recipe-sync dry-run\nplease"
    trigger = run("issue_comment", body)
    assert isinstance(trigger, SyncCommand)
    assert (trigger.kind, trigger.dry_run, trigger.pr_number, trigger.comment_id) == (
        "command",
        True,
        1,
        453012966,
    )
    body["comment"]["body"] = "/recipe-sync please-merge"
    assert isinstance(run("issue_comment", body), Ignored)
    body["comment"]["body"] = "/recipe-sync"
    body["sender"]["login"] = "recipe-sync[bot]"
    assert run("issue_comment", body) == Ignored("comment by a bot (self-loop guard)")


def test_drop_and_keep_commands_name_a_flag_or_env_var() -> None:
    body = payload("issue_comment.created.pull_request.json")
    body["comment"]["body"] = "/recipe-sync drop --moe-backend\nthe CK path is not ours yet"
    trigger = run("issue_comment", body)
    assert isinstance(trigger, DropHunk)
    assert (trigger.kind, trigger.subject, trigger.pr_number) == ("drop", "--moe-backend", 1)
    assert event_from_json(event_json(trigger)) == trigger
    body["comment"]["body"] = "/recipe-sync keep AITER_TRITON_LOG_LEVEL"
    trigger = run("issue_comment", body)
    assert isinstance(trigger, KeepHunk)
    assert (trigger.kind, trigger.subject) == ("keep", "AITER_TRITON_LOG_LEVEL")
    body["comment"]["body"] = "/recipe-sync add --linear-backend"
    trigger = run("issue_comment", body)
    assert isinstance(trigger, AddHunk)
    assert (trigger.kind, trigger.subject) == ("add", "--linear-backend")
    assert event_from_json(event_json(trigger)) == trigger
    # a GPU's verification mark, offered when no eval run was seen
    body["comment"]["body"] = "/recipe-sync add meta.hardware.mi355x"
    trigger = run("issue_comment", body)
    assert isinstance(trigger, AddHunk) and trigger.subject == "meta.hardware.mi355x"
    body["comment"]["body"] = "/recipe-sync add meta.hardware.$(id)"
    assert isinstance(run("issue_comment", body), Ignored)
    body["comment"]["body"] = "/recipe-sync drop $(reboot)"
    assert run("issue_comment", body) == Ignored(
        "'$(reboot)' is not a flag, an environment variable or meta.hardware.GPU"
    )
    body["comment"]["body"] = "/recipe-sync drop"  # no subject: not a command at all
    assert isinstance(run("issue_comment", body), Ignored)


def test_workflow_runs_with_and_without_pull_requests() -> None:
    with_prs = run("workflow_run", payload("workflow_run.completed.json"))
    fork = run("workflow_run", payload("workflow_run.completed.without-pull-requests.json"))
    assert isinstance(with_prs, WorkflowRunCompleted) and with_prs.pr_numbers == (2,)
    assert (
        isinstance(fork, WorkflowRunCompleted)
        and fork.pr_numbers == ()
        and fork.head_ref == "master"
    )
    assert isinstance(run("workflow_run", payload("workflow_run.requested.json")), Ignored)


def test_check_runs_of_ours_only_and_not_from_ourselves() -> None:
    body = payload("check_run.rerequested.json")
    assert run("check_run", body) == Ignored("not our check run")
    body["check_run"]["name"] = CHECK_NAME
    trigger = run("check_run", body)
    assert (
        isinstance(trigger, CheckRunRequested)
        and trigger.kind == "check_run"
        and trigger.check_run_id == 4
    )
    body["sender"]["login"] = "recipe-sync[bot]"
    assert isinstance(run("check_run", body), Ignored)
    assert isinstance(run("check_run", payload("check_run.completed.json")), Ignored)


def test_installation_events_drop_cached_installations() -> None:
    """Delivered to every App (not subscribable, so not in ALLOWED); any action counts."""
    created = run("installation", payload("installation.created.json"))
    added = run("installation_repositories", payload("installation_repositories.added.json"))
    for trigger in (created, added):
        assert isinstance(trigger, InstallationChanged) and trigger.kind == "installation"
        assert (
            trigger.installation_id is not None and event_from_json(event_json(trigger)) == trigger
        )
    assert isinstance(added, InstallationChanged) and added.repo == "Codertocat"
    with pytest.raises(PayloadError, match=r"installation\.id"):
        run("installation", {"action": "deleted"})


def test_events_outside_the_allow_list_and_broken_payloads() -> None:
    assert isinstance(run("push", payload("push.json")), Ignored)
    assert run("ping", {"zen": "x"}) == Ignored("ping")
    with pytest.raises(PayloadError, match=r"repository\.full_name"):
        run("pull_request", {"action": "labeled"})


# --- retry policy ----------------------------------------------------------------------------


def test_rate_limit_waits() -> None:
    now = 1_000_000.0
    assert rate_limit_wait(403, {"Retry-After": "7"}, "", 1, now).seconds == 7  # type: ignore[union-attr]
    primary = rate_limit_wait(
        403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(now) + 30)}, "", 1, now
    )
    assert primary is not None and primary.seconds == 31 and primary.reason == "primary-reset"
    secondary = [
        rate_limit_wait(403, {}, "You have exceeded a secondary rate limit", attempt, now)
        for attempt in (1, 2, 3)
    ]
    assert [w.seconds for w in secondary if w] == [60, 120, 240]
    assert rate_limit_wait(429, {}, "", 1, now).seconds == 60  # type: ignore[union-attr]
    assert rate_limit_wait(403, {}, "Resource not accessible by integration", 1, now) is None
    assert rate_limit_wait(404, {"retry-after": "1"}, "", 1, now) is None


def test_transient_retries_are_for_reads_only() -> None:
    assert transient_wait("GET", 502, 1).seconds == 1  # type: ignore[union-attr]
    assert transient_wait("GET", 503, 3).seconds == 4  # type: ignore[union-attr]
    assert transient_wait("GET", None, 2).seconds == 2  # type: ignore[union-attr]
    assert transient_wait("POST", 502, 1) is None and transient_wait("PATCH", None, 1) is None
    assert transient_wait("GET", 501, 1) is None


def test_annotations_go_fifty_per_request() -> None:
    annotations = [Annotation("a.sh", i, i, "weird-level", "m", "t") for i in range(1, 121)]
    sizes = [len(b) for b in batches(annotations)]
    assert sizes == [50, 50, 20] and batches([]) == [[]]
    assert batches(annotations)[0][0]["annotation_level"] == "warning"


# --- settings and engine contract ------------------------------------------------------------


def test_settings_from_env_and_their_one_line_errors(tmp_path: Path) -> None:
    settings_ = Settings.from_env({"RECIPE_SYNC_WEBHOOK_SECRET": "s", "HOME": str(tmp_path)})
    assert settings_.effective_database_url.startswith("sqlite:///")
    assert settings_.recipes_repo == "vllm-project/recipes" and not settings_.app_mode
    with pytest.raises(CredentialsMissing, match="GITHUB_TOKEN"):
        settings_.require_credentials()
    with pytest.raises(SettingsError, match="RECIPE_SYNC_WEBHOOK_SECRET is not set"):
        Settings.from_env({}).require_webhook_secret()
    for env, message in [
        ({"RECIPE_SYNC_APP_ID": "1"}, "both RECIPE_SYNC_APP_ID"),
        ({"RECIPE_SYNC_RECIPES_REPO": "nope"}, "owner/name"),
        ({"RECIPE_SYNC_ENGINE": "nocolon"}, "module:attr"),
        ({"RECIPE_SYNC_STALE_AFTER": "soon"}, "number of seconds"),
        ({"RECIPE_SYNC_APP_ID": "1", "RECIPE_SYNC_PRIVATE_KEY_PATH": "/nope.pem"}, "no such file"),
    ]:
        with pytest.raises(SettingsError, match=message) as err:
            Settings.from_env(env)
        assert "\n" not in str(err.value)


def test_missing_engine_is_a_clear_retryable_error() -> None:
    with pytest.raises(EngineUnavailable, match=r"bot\.align\.nowhere:Engine.*RECIPE_SYNC_ENGINE"):
        load_engine("bot.align.nowhere:Engine")
    engine = load_engine("tests.service.engine_double:DeterministicTestEngine")
    assert callable(engine.sync)
    assert callable(load_engine("bot.service.engine:AlignEngine").sync)  # the default engine


def test_outcomes_the_service_cannot_apply_are_rejected() -> None:
    change = RecipeChange("models/a/b.yaml", {"../evil": b"x"}, "t", "b", "m", "f")
    outcome = SyncOutcome((change,), (), "c", "success", "t", "s", ())
    with pytest.raises(EngineContractError, match="outside the repository"):
        check_outcome(outcome)
    with pytest.raises(EngineContractError, match="conclusion"):
        check_outcome(SyncOutcome((), (), "c", "maybe", "t", "s", ()))


def test_app_manifest_is_least_privilege_and_matches_the_handled_events() -> None:
    from ruamel.yaml import YAML

    from bot.service.intake import ALLOWED

    manifest = YAML(typ="safe").load((Path(__file__).resolve().parents[2] / "app.yml").read_text())
    valid = {
        "name",
        "url",
        "hook_attributes",
        "redirect_url",
        "callback_urls",
        "setup_url",
        "description",
        "public",
        "default_events",
        "default_permissions",
        "request_oauth_on_install",
        "setup_on_update",
    }
    assert set(manifest) <= valid and manifest["public"] is False
    assert set(manifest["default_events"]) == set(ALLOWED)
    assert manifest["default_permissions"] == {
        "metadata": "read",
        "contents": "write",
        "pull_requests": "write",
        "checks": "write",
        "actions": "read",
        "issues": "write",
    }
