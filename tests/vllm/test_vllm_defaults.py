"""rules/vllm-defaults.yaml: validated with located errors; defaults resolved per version,
device tier, usage context and the side's other settings (doc §2, §3)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from bot.commands.diff import taxonomy_vram
from bot.errors import InputError
from bot.rules import load_rules
from bot.vllm.defaults import (
    DeviceScenario,
    VllmDefaults,
    load_vllm_defaults,
    resolve,
    scenarios_for,
    tier_for,
)
from bot.vllm.defaults import pick as pick_entry
from tests.shared import corpus_dir

RULES = Path(__file__).resolve().parents[2] / "rules"
CORPUS = corpus_dir()
V33, V27, V17, V12 = (0, 33, 0), (0, 27, 1), (0, 17, 0), (0, 12, 0)


@pytest.fixture(scope="module")
def defaults() -> VllmDefaults:
    return load_vllm_defaults(RULES)


def gpu(memory: float, name: str = "", platform: str = "cuda") -> DeviceScenario:
    return DeviceScenario("device", memory, name, platform, "B200" in name or "B300" in name)


def value(
    d: VllmDefaults, key: str, version: tuple[int, int, int], device: DeviceScenario, **side: Any
) -> Any:
    side_values = {k.replace("__", "."): v for k, v in side.items()}
    res = resolve(d, key, version, side_values, device)
    assert res is not None
    return res.value


def test_every_entry_cites_a_source(defaults: VllmDefaults) -> None:
    for rule in defaults.defaults:
        assert all(v.source for v in rule.values), rule.key
    text = (RULES / "vllm-defaults.yaml").read_text()
    assert text.count("source:") >= len(defaults.defaults)


@pytest.mark.parametrize(
    ("old", "new", "key", "reason"),
    [
        (
            'since: "0.22", value: 0.92',
            'since: "zero", value: 0.92',
            "defaults.2.values.1.since",
            "not a version",
        ),
        ("max_num_seqs: 128", "max_num_seqs: -1", "batch.fallback.max_num_seqs", "greater than 0"),
        (
            "    default_level: 2",
            "    default_level: 7",
            "optimization.0.default_level",
            "not one of levels",
        ),
        ("  - key: model.seed", "  - key: model.dtype", "defaults.15.key", "duplicate key"),
    ],
)
def test_broken_defaults_name_file_key_and_line(
    tmp_path: Path, old: str, new: str, key: str, reason: str
) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(RULES, rules)
    path = rules / "vllm-defaults.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(InputError) as err:
        load_vllm_defaults(rules)
    message = str(err.value)
    assert "vllm-defaults.yaml:" in message and f"key '{key}'" in message and reason in message
    assert "\n" not in message


# --- §2 batch defaults --------------------------------------------------------------------------

MI355X = gpu(287.98, "AMD Instinct MI355X", "rocm")
H200 = gpu(139.8, "NVIDIA H200")
A100 = gpu(79.2, "NVIDIA A100-SXM4-80GB")
GB10 = gpu(119.7, "NVIDIA GB10")
L40S = gpu(44.4, "NVIDIA L40S")
B200 = gpu(178.4, "NVIDIA B200")


@pytest.mark.parametrize(
    ("device", "version", "mnbt", "seqs"),
    [
        (MI355X, V33, 16384, 1024),
        (B200, V33, 16384, 1024),
        (H200, V33, 8192, 1024),
        (A100, V33, 2048, 256),
        (GB10, V33, 2048, 256),  # excluded from the middle tier in 0.33
        (L40S, V33, 2048, 256),
        (MI355X, V27, 8192, 1024),  # no >=160 GiB tier before 0.28
        (B200, V27, 8192, 1024),
        (GB10, V27, 8192, 1024),  # no GB10 exclusion before 0.28
        (A100, V12, 2048, 256),
    ],
)
def test_batch_defaults_for_vllm_serve(
    defaults: VllmDefaults,
    device: DeviceScenario,
    version: tuple[int, int, int],
    mnbt: int,
    seqs: int,
) -> None:
    assert value(defaults, "scheduler.max_num_batched_tokens", version, device) == mnbt
    assert value(defaults, "scheduler.max_num_seqs", version, device) == seqs


def test_throughput_mode_doubles_only_defaulted_values_from_017(defaults: VllmDefaults) -> None:
    kw = {"vllm__performance_mode": "throughput"}
    assert value(defaults, "scheduler.max_num_seqs", V33, MI355X, **kw) == 2048
    assert value(defaults, "scheduler.max_num_batched_tokens", V33, MI355X, **kw) == 32768
    assert (
        value(
            defaults,
            "scheduler.max_num_batched_tokens",
            V33,
            MI355X,
            scheduler__max_num_seqs=64,
            **kw,
        )
        == 32768
    )
    assert (
        value(defaults, "scheduler.max_num_seqs", V12, MI355X, **kw) == 1024
    )  # no performance mode in 0.12


def test_batched_dp_moe_override_from_022(defaults: VllmDefaults) -> None:
    side = {
        "parallel__all2all_backend": "deepep_low_latency",
        "parallel__enable_expert_parallel": True,
        "parallel__data_parallel_size": 8,
    }
    assert value(defaults, "scheduler.max_num_batched_tokens", V33, MI355X, **side) == 256
    assert (
        value(defaults, "scheduler.max_num_seqs", V33, MI355X, **side) == 256
    )  # clamp: seqs <= mnbt
    assert value(defaults, "scheduler.max_num_batched_tokens", V17, MI355X, **side) == 8192


def test_clamps_use_max_model_len_and_chunked_prefill(defaults: VllmDefaults) -> None:
    assert (
        value(
            defaults,
            "scheduler.max_num_batched_tokens",
            V33,
            MI355X,
            model__max_model_len=8,
            scheduler__max_num_seqs=4,
        )
        == 32
    )
    off = {"scheduler__enable_chunked_prefill": False}
    assert (
        value(
            defaults,
            "scheduler.max_num_batched_tokens",
            V33,
            MI355X,
            model__max_model_len=65536,
            **off,
        )
        == 65536
    )
    res = resolve(
        defaults,
        "scheduler.max_num_batched_tokens",
        V33,
        {"scheduler.enable_chunked_prefill": False},
        MI355X,
    )
    assert res is not None and res.unresolved  # derived from the model's max_model_len


def test_usage_context_fallback(defaults: VllmDefaults) -> None:
    res = resolve(defaults, "scheduler.max_num_seqs", V33, {}, MI355X, usage="OPENAI_BATCH_RUNNER")
    assert res is not None and res.value == 128 and "scheduler.py:41-43" in res.source
    llm = resolve(defaults, "scheduler.max_num_batched_tokens", V33, {}, H200, usage="LLM_CLASS")
    assert llm is not None and llm.value == 16384


def test_cpu_and_tpu_rows(defaults: VllmDefaults) -> None:
    cpu = DeviceScenario("cpu", 256.0, "Intel Xeon 6", "cpu", False)
    assert (
        value(defaults, "scheduler.max_num_seqs", V33, cpu, parallel__tensor_parallel_size=4) == 512
    )
    v6e = DeviceScenario("tpu", 31.25, "TPU v6e", "tpu", False)
    assert value(defaults, "scheduler.max_num_batched_tokens", V33, v6e) == 1024
    assert value(defaults, "scheduler.max_num_seqs", V33, v6e) == 256


def test_between_researched_releases_the_table_is_unverified(defaults: VllmDefaults) -> None:
    res = resolve(defaults, "scheduler.max_num_batched_tokens", (0, 30, 0), {}, MI355X)
    assert res is not None and res.value == 16384 and "not verified" in res.unverified
    assert pick_entry(defaults.batch.tables, V27, "t").unverified == ""


# --- §3 other defaults ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "version", "side", "expected"),
    [
        ("cache.gpu_memory_utilization", V17, {}, 0.9),
        ("cache.gpu_memory_utilization", V27, {}, 0.92),
        ("compilation.cudagraph_mode", V33, {}, "FULL_AND_PIECEWISE"),
        ("compilation.cudagraph_mode", V33, {"vllm.optimization_level": 1}, "PIECEWISE"),
        ("compilation.cudagraph_mode", V33, {"vllm.optimization_level": 0}, "NONE"),
        ("compilation.cudagraph_mode", V33, {"model.enforce_eager": True}, "NONE"),
        ("compilation.mode", V33, {}, 3),
        ("compilation.mode", V33, {"vllm.optimization_level": 0}, 0),
        ("parallel.distributed_executor_backend", V33, {}, "uni"),
        ("parallel.distributed_executor_backend", V33, {"parallel.tensor_parallel_size": 8}, "mp"),
        ("vllm.performance_mode", V33, {}, "balanced"),
        ("attention.indexer_kv_dtype", V27, {}, "bf16"),
        ("attention.indexer_kv_dtype", V33, {}, "auto"),
    ],
)
def test_static_and_derived_defaults(
    defaults: VllmDefaults,
    key: str,
    version: tuple[int, int, int],
    side: dict[str, Any],
    expected: Any,
) -> None:
    res = resolve(defaults, key, version, side, MI355X)
    assert res is not None and res.value == expected


@pytest.mark.parametrize(
    ("device", "version", "side", "expected"),
    [
        (MI355X, V33, {}, 512),
        (B200, V33, {}, 1024),  # SM10x: 1024 in 0.33
        (B200, V27, {}, 512),
        (MI355X, V33, {"scheduler.max_num_seqs": 128}, 256),
        (
            MI355X,
            V33,
            {"scheduler.max_num_seqs": 32, "speculative_config": {"num_speculative_tokens": 5}},
            384,
        ),
        (MI355X, V33, {"scheduler.max_num_seqs": 128, "scheduler.max_num_batched_tokens": 64}, 64),
    ],
)
def test_max_cudagraph_capture_size(
    defaults: VllmDefaults,
    device: DeviceScenario,
    version: tuple[int, int, int],
    side: dict[str, Any],
    expected: int,
) -> None:
    res = resolve(defaults, "compilation.max_cudagraph_capture_size", version, side, device)
    assert res is not None and res.value == expected


def test_capture_sizes_default_list(defaults: VllmDefaults) -> None:
    res = resolve(
        defaults, "compilation.cudagraph_capture_sizes", V33, {"scheduler.max_num_seqs": 16}, MI355X
    )
    assert res is not None and res.value == [1, 2, 4, 8, 16, 24, 32]


def test_no_default_for_unresearched_keys(defaults: VllmDefaults) -> None:
    assert resolve(defaults, "model.tokenizer_mode", V33, {}, MI355X) is None


# --- devices---------------------------------------------------------------------------------------


def test_unknown_device_has_one_scenario_per_tier(defaults: VllmDefaults) -> None:
    labels = [
        s.label
        for s in scenarios_for(
            defaults, V33, hardware=None, memory_gib=None, device_name=None, platform=None
        )
    ]
    assert (
        labels[0] == "≥160 GiB" and any("SM10x" in label for label in labels) and len(labels) == 4
    )
    old = scenarios_for(
        defaults, V27, hardware=None, memory_gib=None, device_name=None, platform=None
    )
    assert len(old) == 2


@pytest.mark.skipif(not CORPUS.is_dir(), reason="recipes corpus not present")
def test_taxonomy_memory_lands_in_the_same_tier_as_the_hardware_table(
    defaults: VllmDefaults,
) -> None:
    """Taxonomy vram_gb / gpu_count (marketing GB) and the memory the device reports must
    never straddle a tier boundary, so either source gives the same defaults."""
    rules = load_rules(RULES)
    vram = taxonomy_vram(CORPUS)
    for table in defaults.batch.tables:
        for hw, gpu_facts in rules.hardware.gpus.items():
            if hw not in vram:
                continue
            a = tier_for(table, vram[hw], gpu_facts.device_name)
            b = tier_for(table, gpu_facts.memory_gib, gpu_facts.device_name)
            assert a.id == b.id, (hw, table.since)
    assert set(vram) <= set(rules.hardware.gpus)  # every taxonomy GPU has a row
