"""Multi-node vLLM keys of the real master configs: framework family and reason text."""

from __future__ import annotations

from bot.benchmarks.scope import multinode_reason, serves_vllm


def worker(*settings: str) -> dict[str, object]:
    return {"num-worker": 1, "tp": 8, "additional-settings": list(settings)}


def entry(prefill: dict[str, object], decode: dict[str, object]) -> dict[str, object]:
    space = {"conc-list": [4], "prefill": prefill, "decode": decode}
    return {"scenarios": {"fixed-seq-len": [{"isl": 1024, "osl": 1024, "search-space": [space]}]}}


def test_vllm_family_frameworks() -> None:
    assert all(serves_vllm(f) for f in ("vllm", "dynamo-vllm", "vllm-disagg", "llmd-vllm"))
    assert not any(serves_vllm(f) for f in ("sglang", "dynamo-sglang", "trt", "atom-disagg"))
    assert not serves_vllm("vllmx")


def test_recipe_file_is_named() -> None:
    raw = entry(worker("CONFIG_FILE=recipes/acme/foo-1p1d.yaml"), worker())
    assert multinode_reason("dynamo-vllm", raw) == (
        "multi-node dynamo-vllm: its serve commands are rendered from the recipe "
        "CONFIG_FILE=recipes/acme/foo-1p1d.yaml (srt-slurm / llm-d), not by a single-node script"
    )


def test_several_recipe_files_are_counted() -> None:
    raw = entry(worker("PREFILL_NODES=2", "CONFIG_FILE=a.yaml"), worker("CONFIG_FILE=b.yaml"))
    assert "CONFIG_FILE=a.yaml and 1 more" in multinode_reason("llmd-vllm", raw)


def test_launcher_settings_without_a_recipe() -> None:
    raw = entry(worker("PREFILL_NODES=1"), worker("DECODE_NODES=2", "DECODE_MTP_SIZE=0"))
    assert multinode_reason("vllm-disagg", raw) == (
        "multi-node vllm-disagg: started by the multi-node launcher from per-worker settings "
        "(PREFILL_NODES=1, DECODE_NODES=2, DECODE_MTP_SIZE=0), not by a single-node script"
    )


def test_odd_shapes_do_not_crash() -> None:
    for raw in (None, {}, {"scenarios": []}, {"scenarios": {"x": [{"search-space": 3}]}}):
        assert (
            multinode_reason("vllm", raw) == "multi-node vllm: not started by a single-node script"
        )
