"""What the bot posts around its texts: the metadata line, the alignment branch name."""

from __future__ import annotations

import subprocess

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.present.posted import (
    PullMeta,
    alignment_branch,
    meta_comment,
    parse_meta,
    recipe_slug,
    sanitize_component,
)


def test_meta_round_trip_and_cannot_be_closed_early() -> None:
    data = {"target": "models/a-->b <!-- x", "fingerprint": "f" * 64}
    comment = meta_comment(data)
    assert comment.count("-->") == 1 and comment.count("<!--") == 1
    assert parse_meta("<!-- recipe-sync:verify v1 -->\n" + comment + "\nbody") == data
    assert parse_meta("no metadata") is None


def test_alignment_branch_examples() -> None:
    assert (
        alignment_branch(
            "recipe-sync/",
            "SemiAnalysisAI/InferenceX",
            3058,
            "models/deepseek-ai/DeepSeek-V4.1-Flash.yaml",
        )
        == "recipe-sync/InferenceX-3058/deepseek-ai-deepseek-v4.1-flash"
    )
    assert recipe_slug("models/a..b/c.lock.yaml") == "a.b-c-lock"
    assert sanitize_component("..") == "x" and sanitize_component("-x.") == "x"


@settings(max_examples=60, deadline=None)
@given(
    prefix=st.sampled_from(["recipe-sync/", "bots/sync/", "x/"]),
    repo=st.from_regex(r"[A-Za-z0-9._-]{1,20}/[A-Za-z0-9._-]{1,30}", fullmatch=True),
    number=st.integers(min_value=1, max_value=10**6),
    path=st.text(min_size=1, max_size=60),
)
def test_alignment_branches_always_pass_git_check_ref_format(
    prefix: str, repo: str, number: int, path: str
) -> None:
    branch = alignment_branch(prefix, repo, number, path)
    result = subprocess.run(["git", "check-ref-format", "--branch", branch], capture_output=True)
    assert result.returncode == 0, branch
    assert alignment_branch(prefix, repo, number, path) == branch  # deterministic


def test_a_pull_request_body_names_its_fingerprint_first() -> None:
    meta = PullMeta("o/n#1@abc", "models/a.yaml", "f" * 64, "recipe-sync/n-1/a")
    body = meta.comment() + "\ntext\n\n---\nfooter"
    assert PullMeta.fingerprint_of(body) == "f" * 64
    assert PullMeta.fingerprint_of("a body someone else wrote") is None
    assert "branch" not in (parse_meta(PullMeta("o/n", "m.yaml", "f").comment()) or {})
