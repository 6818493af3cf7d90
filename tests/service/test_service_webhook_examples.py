"""Every example payload of ``@octokit/webhooks-examples`` (installed by ``make test`` into
``.npm-tools``), signed and posted to a real ``recipe-sync serve`` over HTTP: none is a 5xx,
subscribed events end as bot/service/intake.py documents (queued or ignored), the rest are
acknowledged and ignored. The examples rarely concern us (another label, a comment that is
not a command), so each subscribed one is also sent made relevant. The queued deliveries are
then dispatched against the fake GitHub (seeded with the examples' repository): none may
crash or fail."""

from __future__ import annotations

import copy
import json
import logging
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.github.signature import sign
from bot.present.posted import DASHBOARD_MARKER
from bot.service.intake import ALLOWED, CHECK_NAME, INSTALLATION_EVENTS, RECHECK_ACTION
from tests.service.conftest import (
    BOT,
    SCRIPT,
    SECRET,
    Harness,
    free_port,
    push,
    script,
    wait_serving,
)
from tests.service.test_service_kill import ROOT, service_env
from tests.service.test_service_kill_intake import stop

PACKAGE = ROOT / ".npm-tools/node_modules/@octokit/webhooks-examples"
HELLO = "Codertocat/Hello-World"  # the repository of every example
SUBSCRIBED = frozenset(ALLOWED)  # = app.yml default_events (test_service_units checks it)
KNOWN = SUBSCRIBED | INSTALLATION_EVENTS | {"ping"}

# (event, action) of the raw examples that must be queued: the rest of a subscribed event's
# examples are ignored for a documented reason (another label, a comment that is not a
# command, an unlabelled PR, not our check run, not the dashboard issue)
QUEUED_AS_IS = {("pull_request", "closed"), ("workflow_run", "completed")}


def load_examples() -> list[tuple[str, dict[str, Any]]]:
    """(event, payload) of every example of every API version (api.github.com, ghes-*), each
    distinct payload once (the GHES sets repeat most of them)."""
    sets = sorted(PACKAGE.glob("*/index.json"))
    if not sets:
        pytest.skip(
            f"{PACKAGE.relative_to(ROOT)} is not installed: `make test` installs it with npm "
            "(npm missing or offline?)"
        )
    seen: set[tuple[str, str]] = set()
    examples = []
    for path in sets:
        for definition in json.loads(path.read_text()):
            for example in definition["examples"]:
                key = (definition["name"], json.dumps(example, sort_keys=True))
                if key not in seen:
                    seen.add(key)
                    examples.append((definition["name"], example))
    return examples


def targeted(event: str, example: dict[str, Any]) -> dict[str, Any] | None:
    """The example made to concern us (trigger label, command, our check run, the
    dashboard issue), so the accepting paths run on GitHub-shaped payloads too."""
    payload = copy.deepcopy(example)
    action = payload.get("action")
    if event == "pull_request" and action in ("labeled", "unlabeled"):
        payload["label"]["name"] = "recipe-sync"
    elif event == "pull_request" and action in ALLOWED["pull_request"] - {"closed"}:
        payload["pull_request"]["labels"].append({"name": "recipe-sync"})
    elif event == "issue_comment" and action == "created":
        payload["issue"]["pull_request"] = {"url": "https://api.github.com/pulls/1"}
        payload["comment"]["body"] = "/recipe-sync dry-run"
        payload["sender"]["type"] = "User"
    elif event == "check_run" and action in ALLOWED["check_run"]:
        payload["check_run"]["name"] = CHECK_NAME
        if action == "requested_action":
            payload["requested_action"] = {"identifier": RECHECK_ACTION}
    elif event == "issues" and action == "edited":
        payload["issue"]["user"]["login"] = BOT
        payload["issue"]["body"] = f"{DASHBOARD_MARKER}\n- [x] re-run"
        payload["sender"]["type"] = "User"
    else:
        return None
    return payload


def expected(event: str, action: Any, variant: bool) -> str:
    """'accepted' or 'ignored', from the documented trigger table."""
    if event in INSTALLATION_EVENTS:
        return "accepted"  # delivered to every App: caches are dropped
    if event not in SUBSCRIBED or action not in ALLOWED[event]:
        return "ignored"
    if variant or (event, action) in QUEUED_AS_IS:
        return "accepted"
    return "ignored"


@pytest.mark.slow
def test_every_octokit_example_is_answered_as_documented(
    harness: Harness, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    examples = load_examples()
    deliveries: list[tuple[str, str, dict[str, Any], bool]] = []
    for event, example in examples:
        deliveries.append((str(uuid.uuid4()), event, example, False))
        variant = targeted(event, example)
        if variant is not None:
            deliveries.append((str(uuid.uuid4()), event, variant, True))
    assert len(examples) >= 400 and {event for event, _ in examples} >= SUBSCRIBED

    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        # --no-consumer: the queue is drained below, in this process, against the fake
        server = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve", "--port", str(port), "--no-consumer",
             "--log-level", "warning"],
            cwd=ROOT, env=service_env(harness), stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    statuses: Counter[int] = Counter()
    wrong: list[str] = []
    accepted: list[str] = []
    ignored: list[str] = []
    try:
        wait_serving(f"{base}/healthz", server, log)
        with httpx.Client(base_url=base, timeout=30) as client:
            for delivery, event, payload, variant in deliveries:
                body = json.dumps(payload).encode()
                response = client.post(
                    "/webhooks/github",
                    content=body,
                    headers={
                        "Content-Type": "application/json",
                        "X-GitHub-Event": event,
                        "X-GitHub-Delivery": delivery,
                        "X-Hub-Signature-256": sign(SECRET, body),
                    },
                )
                statuses[response.status_code] += 1
                # a 500 is plain text: kept for the 5xx assertion below
                answer = response.json() if response.status_code < 500 else {}
                outcome = answer.get("status")
                action = payload.get("action")
                want = expected(event, action, variant)
                code = 202 if want == "accepted" else 200
                reason = answer.get("reason", "")
                if event not in KNOWN and "not handled" not in reason:
                    wrong.append(f"{event}: unsubscribed but ignored for '{reason}'")
                if (response.status_code, outcome) != (code, want):
                    wrong.append(f"{event}.{action} (variant={variant}): {response.text[:200]}")
                (accepted if outcome == "accepted" else ignored).append(delivery)
    finally:
        stop(server)
    assert "Traceback" not in log.read_text(), log.read_text()[-4000:]
    assert not any(code >= 500 for code in statuses), (statuses, wrong[:5])
    assert not wrong, "\n".join(wrong)

    # accepted means recorded and queued; ignored means neither
    store = harness.rt.store
    assert all(store.deliveries.get(d) is not None for d in accepted)
    assert all(store.deliveries.get(d) is None for d in ignored)
    assert harness.pending() == len(accepted)

    # the examples' repository, with its PRs #1 and #2, so the jobs get past the lookup
    harness.fake.create_repo(HELLO, {SCRIPT: script(256), "README.md": "hello\n"})
    for number in (1, 2):
        push(harness.fake, 200 + number, branch="changes", repo=HELLO)
        harness.fake.open_pull(HELLO, head_ref="changes", labels=("recipe-sync",), number=number)
    harness.fake.set_permission(HELLO, "Codertocat", "admin")
    with caplog.at_level(logging.ERROR):
        harness.drain()
    crashes = [r.getMessage() for r in caplog.records if "crashed" in r.getMessage()]
    assert not crashes, crashes
    ends: Counter[str] = Counter()
    for delivery in accepted:
        found = store.deliveries.get(delivery)
        assert found is not None
        ends[found[1]] += 1
    # every queued trigger was dispatched to the end (none failed, none left to retry)
    assert ends == {"done": len(accepted)}, ends
    # the label (#2) and the command (#1) variants ran a sync that reported on the PR
    for number in (1, 2):
        sync = store.syncs.find(HELLO, number)
        assert sync is not None and sync.state == "done", sync
    assert harness.fake.check_runs_on(HELLO)
    print(f"{len(deliveries)} deliveries ({len(examples)} examples): {dict(statuses)}; "
          f"queued deliveries ended {dict(ends)}")  # fmt: skip
