"""Small judgement rules learnt from the recipes history (issue #24)."""

from __future__ import annotations

from bot.align.demands.image import nightly_channel
from bot.align.nodes import host_local


def test_host_local_values_are_recognised_inside_json_too() -> None:
    assert host_local("/data/models/kimi-k2.6-eagle3-mla") is not None
    assert host_local('{"method": "eagle3", "model": "/lustre/fsw/models/draft"}') is not None
    assert host_local({"kv_connector_extra_config": {"url": "http://127.0.0.1:8000"}})
    assert host_local("localhost:5000") is not None
    assert host_local("Inferact/MiniMax-M3-EAGLE3") is None
    assert host_local('{"method": "mtp", "num_speculative_tokens": 3}') is None
    assert host_local("/") is None  # a bare slash names no file
    assert host_local(4096) is None


def test_a_nightly_build_maps_to_its_channel_and_nothing_else_does() -> None:
    build = "vllm/vllm-openai-rocm:nightly-09663abde0f50944a8d5ea30120666024b503faa"
    assert nightly_channel(build) == "vllm/vllm-openai-rocm:nightly"
    assert nightly_channel("vllm/vllm-openai:nightly-20260712") == "vllm/vllm-openai:nightly"
    for image in ("vllm/vllm-openai:v0.25.0", "vllm/vllm-openai:nightly", "x@sha256:ab", None):
        assert nightly_channel(image) is None
