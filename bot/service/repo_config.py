"""A benchmark repository's own policy: ``.github/recipe-sync.yml`` on its default branch.

Same schema as ``rules/policy.yaml``; each key it sets overrides the service's policy for
syncs of that repository (``pr`` key by key): ``recipe_only_flags``, ``mark_verified``,
``eval_thresholds`` reach the engine, ``branch_prefix`` and ``pr`` the alignment PRs.
``trigger_label`` and ``comment_command`` are read by the webhook before any repository is,
so they stay the service's. Read from the default branch, never from the PR head: a PR
cannot change the policy it is judged by. An invalid file is not fatal: the service's policy
is used and the verification comment says what is wrong, with file, key and line.
"""

from __future__ import annotations

from bot.errors import RecipeSyncError
from bot.rules import REPO_POLICY_PATH, repo_policy
from bot.rules.models import Policy
from bot.sources import FileSource, read_text


def repository_policy(base: Policy, source: FileSource | None) -> tuple[Policy, str]:
    """(the policy for this repository, the problem with its file or "")."""
    if source is None or not source.exists(REPO_POLICY_PATH):
        return base, ""
    try:
        return repo_policy(read_text(source, REPO_POLICY_PATH), base), ""
    except RecipeSyncError as err:
        return base, str(err)


def config_note(problem: str) -> str:
    """The verification comment's first lines when the repository's policy is invalid."""
    if not problem:
        return ""
    return (
        f"> [!WARNING]\n> `{REPO_POLICY_PATH}` is not valid, so the service's policy was used: "
        f"{problem}\n\n"
    )
