"""The "not carried into the recipe" list (bot/present/carried.py): one item per setting."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from bot.align.model import Setting
from bot.present.carried import settings_lines

SEQS = "scheduler capacity sized for the benchmark's concurrency"
FLOATS = "the recipe floats on {}: it keeps floating; the benchmark's tag is cited, not pinned"


def _plan(*settings: Setting) -> Any:
    return SimpleNamespace(settings=settings, to_classify=())


def _seqs(bench: str, lane: str = "GPT-OSS mi355x single_node_tp") -> Setting:
    return Setting("tuning", "flag", "--max-num-seqs", bench, None, SEQS, lane)


def test_a_flag_with_a_value_per_concurrency_is_one_item() -> None:
    """InferenceX #1571: `--max-num-seqs` once per concurrency value and spelling, eight
    items with the same reason; now one, its values in order, each once."""
    plan = _plan(
        Setting("tuning", "flag", "--gpu-memory-utilization", "--gpu-memory-utilization 0.9",
                None, "memory headroom tuned for the benchmark node", "GPT-OSS b200 tp"),
        _seqs("--max-num-seqs 512", "GPT-OSS b200 single_node_tp"),
        *(_seqs(f"--max-num-seqs={n}") for n in (4, 8, 16, 32, 64)),
        _seqs("--max-num-seqs 32", "GPT-OSS h100 single_node_tp"),
        _seqs("--max-num-seqs 64", "GPT-OSS h100 single_node_tp"),
    )  # fmt: skip
    lines = settings_lines(plan)
    assert lines[2:] == [
        "- tuning: `--gpu-memory-utilization 0.9` (memory headroom tuned for the benchmark "
        "node); `--max-num-seqs` `4`, `8`, `16`, `32`, `64`, `512` (scheduler capacity sized "
        "for the benchmark's concurrency)"
    ]


def test_one_value_keeps_its_launch_spelling_and_reasons_stay_with_their_values() -> None:
    cuda, rocm = "vllm/vllm-openai:latest", "vllm/vllm-openai-rocm:latest"
    plan = _plan(
        _seqs("--max-num-seqs=128"),
        Setting("image", "image", "image", "vllm/vllm-openai:v0.22.0", cuda,
                FLOATS.format(cuda), "GPT-OSS b200 single_node_tp"),
        Setting("image", "image", "image", "vllm/vllm-openai:v0.21.0", cuda,
                FLOATS.format(cuda), "GPT-OSS h100 single_node_tp"),
        Setting("image", "image", "image", "vllm/vllm-openai-rocm:v0.22.0", rocm,
                FLOATS.format(rocm), "GPT-OSS mi355x single_node_tp"),
    )  # fmt: skip
    lines = settings_lines(plan)
    assert lines[2] == f"- tuning: `--max-num-seqs=128` ({SEQS})"
    assert lines[3] == (
        "- image: `vllm/vllm-openai:v0.22.0`, `vllm/vllm-openai:v0.21.0` (the recipe floats "
        "on vllm/vllm-openai:latest: it keeps floating; the benchmark's tag is cited, not "
        "pinned), `vllm/vllm-openai-rocm:v0.22.0` (the recipe floats on "
        "vllm/vllm-openai-rocm:latest: it keeps floating; the benchmark's tag is cited, not "
        "pinned)"
    )


def test_a_long_list_value_is_shown_short_with_its_count() -> None:
    """InferenceX #2616's comment listed six capture-size lists in full, one of 134 numbers;
    each is its first items, its last and how many."""
    sizes = "tuning: capture sizes built from the benchmark's concurrency list"
    flag = "--compilation-config.cudagraph_capture_sizes"
    long = "[" + ",".join(str(n) for n in range(1, 129)) + ",256,512]"
    plan = _plan(
        Setting("tuning", "flag", flag, f"{flag} {long}", None, sizes, "K3 b300 tp"),
        Setting("tuning", "flag", flag, f"{flag} [8,16]", None, sizes, "K3 b300 tp"),
    )
    (line,) = settings_lines(plan)[2:]
    assert line == (f"- tuning: `{flag}` `[1, 2, 3, …, 512]` (130 values), `[8,16]` ({sizes})")
