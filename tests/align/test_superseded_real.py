"""A deprecated spelling a maintainer removed, on a real PR (issue #31 item 4): recipes
5636cbc ("Let Kimi recipes auto-select MLA prefill backend", 2026-07-29) took
``--attention-config.use_trtllm_ragged_deepseek_prefill=True`` out of Kimi-K2.5's Blackwell
block; vLLM reads that field as ``mla_prefill_backend=TRTLLM_RAGGED``
(rules/vllm-defaults.yaml `superseded`). InferenceX #2512, a week later, launches
``mla_prefill_backend`` FLASHINFER on B200: the comment neither offers it back nor leaves
the reviewer guessing why."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shared import align_merged_pr, clone_histories

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return clone_histories(tmp_path_factory.mktemp("superseded-history"))


def test_the_backend_a_maintainer_let_vllm_choose_is_not_offered_back(
    histories: tuple[Path, Path], tmp_path: Path
) -> None:
    assert align_merged_pr(histories, 2512, tmp_path) in (0, 1)
    assert not (tmp_path / "recipe.patch").exists()
    comment = (tmp_path / "comment.md").read_text()
    offered = comment.split("offered settings and their history</summary>", 1)[1]
    assert "mla_prefill_backend" not in offered  # before: offered to tick
    assert "use_prefill_query_quantization" not in offered  # the same flag stays out with it
    assert (
        "| `--attention-config.mla_prefill_backend` | not edited (why below) | — | `FLASHINFER` |"
    ) in comment
    assert (
        "- `--attention-config.mla_prefill_backend` (with "
        "`--attention-config.use_prefill_query_quantization`, of the same flag): not proposed, "
        "it would undo a recent change: a maintainer removed "
        "`use_trtllm_ragged_deepseek_prefill=true`, this setting's deprecated spelling, from "
        "`hardware_overrides.blackwell.extra_args` on 2026-07-29 (5636cbc"
    ) in comment
