"""`recipe-sync demo` (the README's first command) runs the main job on the fixtures; its
output as the documents quote it is compared by tests/test_docs.py (`make docs-check`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.commands.main import main


def test_demo_aligns_the_seed_and_the_audit_confirms_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--out", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    assert (
        "models/deepseek-ai/DeepSeek-V4.1-Flash.yaml: alignment PR "
        "(3 edits and 1 guide section, +50/-0)" in out
    )
    assert (
        "  guide: inserted “FP4 benchmark reproduction (InferenceX MI355X agentic sweep)” "
        "(at the end of the guide)" in out
    )
    assert "before the alignment PR: 29 aligned, 7 drifted, 2 unmapped, 2 unresolved" in out
    # the log level is offered, not written (no adopted proposal of its kind): the points
    # it drifts on stay drifted, and the demo says why
    assert "after applying recipe.patch" in out
    assert (
        "left as they are: --max-num-seqs 128, AITER_TRITON_LOG_LEVEL=ERROR (offered in the PR, "
        "not proposed)"
    ) in out
    align = tmp_path / "demo" / "align"
    assert (align / "pr-title.txt").read_text() == (
        "[DeepSeek-V4.1-Flash][MI355X] Align image and MoE backend with InferenceX #3058\n"
    )
    # the CLI and the reviewer comment count the PR's contents in the same words
    comment = (align / "comment.md").read_text()
    assert ": 3 edits and 1 guide section, fingerprint " in comment
    patch = (align / "recipe.patch").read_text()
    nightly = "vllm/vllm-openai-rocm:nightly-eed1f3d0c6043bd494424a22443ee198dd56f657"
    assert f'+        docker_image: "{nightly}"' in patch
    for report in ("audit-before.html", "audit-after.html", "audit-before.md", "audit-after.md"):
        assert (tmp_path / "demo" / report).stat().st_size > 1000
