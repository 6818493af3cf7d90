"""Settings one launch runs together, on a real PR (rules/knobs.yaml `together`): InferenceX
#2616 ran Kimi-K3 on B300 with decode context parallelism 8, its a2a communication backend,
the direct-DCP variables and the TOKENSPEED_MLA attention backend. vLLM refuses DCP with a
backend that does not return the softmax LSE, so a maintainer who ticks DCP gets the lane's
backend with it, and the PR says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shared import align_merged_pr, clone_histories

pytestmark = pytest.mark.slow

PR = 2616


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return clone_histories(tmp_path_factory.mktemp("together-history"))


def _align(histories: tuple[Path, Path], out: Path, *include: str) -> int:
    return align_merged_pr(histories, PR, out, *include)


def test_ticking_dcp_takes_the_settings_the_lane_ran_with_it(
    histories: tuple[Path, Path], tmp_path: Path
) -> None:
    offered = tmp_path / "offered"
    assert _align(histories, offered) in (0, 1)
    assert not (offered / "recipe.patch").exists()  # nothing proposed unticked
    comment = (offered / "comment.md").read_text()
    assert "`--decode-context-parallel-size 8` at" in comment

    ticked = tmp_path / "ticked"
    assert _align(histories, ticked, "--decode-context-parallel-size") == 1  # a PR to open
    added = [line for line in (ticked / "recipe.patch").read_text().splitlines() if line[:1] == "+"]
    yaml = "\n".join(line for line in added if "recipe-sync:reproduction" not in line)
    for setting in (
        '"--decode-context-parallel-size"',
        '"--dcp-comm-backend"',
        '"--attention-backend"',
        '"TOKENSPEED_MLA"',
        "VLLM_USE_DIRECT_DCP_A2A",
    ):
        assert setting in yaml, setting  # before: DCP 8 alone, a command no lane ran
    body = (ticked / "pr-body.md").read_text()
    assert (
        "- Add `--attention-backend TOKENSPEED_MLA` (kernel: attention kernel selection); "
        "with the ticked `--decode-context-parallel-size` (decode context parallelism, below)."
    ) in body
    assert "- The settings of decode context parallelism go together: " in body
    # the ticked setting itself is not said to come with anything
    assert "- Add `--decode-context-parallel-size 8` (serving:" in body
    assert (
        "8` (serving: the recipe's serving setup — model, parsers, parallelism, executor)." in body
    )
