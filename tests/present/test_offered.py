"""The offered candidates' line in the PR body and the comment (bot/present/offered.py)."""

from __future__ import annotations

from dataclasses import replace

from bot.align.model import PlannedEdit, Wait
from bot.align.run import empty_plan
from bot.present.offered import offered_lines
from tests.align.test_confidence import _edit


def _marlin(gpu: str) -> PlannedEdit:
    node = f"variants.default.hardware_overrides.{gpu}.extra_env.VLLM_MXFP4_USE_MARLIN"
    return _edit("env-new", "VLLM_MXFP4_USE_MARLIN", node, None, "1")


def test_a_setting_offered_for_two_gpus_is_named_once_and_listed_per_node() -> None:
    plan = replace(empty_plan("models/x/M.yaml"), offered=(_marlin("h100"), _marlin("h200")))
    lines = offered_lines(plan, command="/recipe-sync")
    head = (
        "**Offered, not proposed** (kinds with too little adoption history): "
        "`VLLM_MXFP4_USE_MARLIN=1`; "
    )
    assert lines[0].startswith(head)  # was the same setting twice, once per GPU
    assert "2 offered settings" in lines[2]
    assert sum(".h100." in line or ".h200." in line for line in lines) == 2  # one per node


def test_a_flag_offered_in_a_whole_args_list_is_named_by_its_own_tokens() -> None:
    """An override that replaces its layer's list is written whole (real: InferenceX #2371's
    --max-num-seqs in Kimi-K3's spec_decoding blackwell args): the line names the flag and its
    value, not the list."""
    node = "features.spec_decoding.hardware_overrides.blackwell.args"
    after = '["--max-num-seqs", "48", "--speculative-config", "{\\"method\\": \\"dspark\\"}"]'
    seqs = _edit("flag", "--max-num-seqs", node, None, after)
    lines = offered_lines(replace(empty_plan("models/x/M.yaml"), offered=(seqs,)), command="/x")
    assert lines[0].startswith(
        "**Offered, not proposed** (kinds with too little adoption history): `--max-num-seqs 48`;"
    )
    assert "speculative" not in lines[0]
    assert f"- `--max-num-seqs 48` at `{node}`" in "\n".join(lines)


def test_a_negated_flag_is_named_as_the_benchmark_spelled_it() -> None:
    """InferenceX #2224's comment offered "`--enable-flashinfer-autotune
    --no-enable-flashinfer-autotune`": the value is the subject's negated spelling, shown
    alone."""
    node = "strategy_overrides.single_node_dep.hardware_overrides.b200.extra_args"
    autotune = _edit(
        "flag-new", "--enable-flashinfer-autotune", node, None, "--no-enable-flashinfer-autotune"
    )
    lines = offered_lines(replace(empty_plan("models/x/M.yaml"), offered=(autotune,)), command="/x")
    assert lines[0].startswith(
        "**Offered, not proposed** (kinds with too little adoption history): "
        "`--no-enable-flashinfer-autotune`;"
    ), lines[0]
    assert not any("--enable-flashinfer-autotune --no" in line for line in lines)


def test_a_setting_offered_for_the_one_it_runs_with_says_so() -> None:
    """DCP's own kind may be well taken; offered because its attention backend is, the line
    says that, not DCP's adoption history."""
    node = "variants.default.hardware_overrides.b300.extra_args"
    dcp = _edit("flag-new", "--decode-context-parallel-size", node, None, "8")
    wait = Wait("together", "--attention-backend", "DCP needs a backend that returns the LSE")
    plan = replace(
        empty_plan("models/x/M.yaml"),
        offered=(dcp,),
        waiting=((dcp.node, dcp.subject, wait),),
    )
    lines = offered_lines(plan, command="/x")
    assert lines[0].startswith("**Offered, not proposed** (settings that go or stay together)")
    assert (
        f"- `--decode-context-parallel-size 8` at `{node}` — travels with `--attention-backend`, "
        "which is offered: DCP needs a backend that returns the LSE, so they go into the recipe "
        "together or not at all"
    ) in lines


def test_an_offered_image_is_named_as_the_add_command_takes_it() -> None:
    """InferenceX #2511's comment offered a bare `vllm/vllm-openai:nightly` beside a table row
    whose new image was a pinned nightly: the line says it is the image (`add image`)."""
    node = "variants.nvfp4.hardware_overrides.b200.docker_image"
    image = _edit("image", "image", node, "vllm/vllm-openai:minimax-m3", "vllm/vllm-openai:nightly")
    lines = offered_lines(replace(empty_plan("models/x/M.yaml"), offered=(image,)), command="/x")
    assert lines[0].startswith(
        "**Offered, not proposed** (kinds with too little adoption history): "
        "image `vllm/vllm-openai:nightly`; `/x add FLAG`"
    ), lines[0]
    assert f"- image `vllm/vllm-openai:nightly` at `{node}`" in "\n".join(lines)
