"""The normaliser reproduces vLLM's FlexibleArgumentParser: one case per rule of the doc's §1
(../shared/docs/vllm-cli-semantics.md) and §5.2's order."""

from __future__ import annotations

from typing import Any

import pytest

from bot.vllm.normalise import normalise, split_launch_line
from bot.vllm.serve_config import ServeConfig

V33 = (0, 33, 0)
V27 = (0, 27, 1)
V22 = (0, 22, 0)
V17 = (0, 17, 0)
V12 = (0, 12, 0)


def conf(*args: str, version: tuple[int, int, int] = V33, **kw: Any) -> ServeConfig:
    return normalise(("vllm", "serve", *args), version=version, **kw)


def values(*args: str, version: tuple[int, int, int] = V33, **kw: Any) -> dict[str, Any]:
    return conf(*args, version=version, **kw).values()


def codes(*args: str, version: tuple[int, int, int] = V33, **kw: Any) -> set[str]:
    return {f.code for f in conf(*args, version=version, **kw).findings}


def errors(*args: str, version: tuple[int, int, int] = V33, **kw: Any) -> set[str]:
    return {f.code for f in conf(*args, version=version, **kw).errors}


# --- §1.1 --model moves to the positional slot ------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [("X",), ("--model", "X"), ("-tp", "2", "--model=X"), ("--model=X", "-tp", "2")],
)
def test_model_option_and_positional_are_the_same(args: tuple[str, ...]) -> None:
    assert conf(*args).model == "X"
    assert not conf(*args).errors


def test_model_tokens_are_kept_as_spelled() -> None:
    assert conf("-tp", "2", "--model=X").model_tokens == ("--model=X",)
    assert conf("--model", "X").model_tokens == ("--model", "X")


def test_model_given_twice_is_an_error() -> None:
    assert "unrecognised" in errors("Y", "--model", "X")


def test_served_model_name_without_model_is_an_error() -> None:
    assert "no-model" in errors("--served-model-name", "x")
    assert "no-model" not in errors("M", "--served-model-name", "x")


# --- §1.2 --config FILE -------------------------------------------------------------------------

CONFIG = (
    "max_num_seqs: 64\n"
    "enable-prefix-caching: false\n"
    "enforce_eager: true\n"
    "served_model_name: [a, b]\n"
    "empty: []\n"
    "compilation_config: {mode: 3, cudagraph_mode: piecewise}\n"
    "model: from-yaml\n"
)


def test_config_file_is_spliced_before_the_cli_so_cli_wins() -> None:
    got = values("--config", "c.yaml", "--max-num-seqs", "8", config_files={"c.yaml": CONFIG})
    assert got["scheduler.max_num_seqs"] == 8  # CLI > YAML
    assert got["model.enforce_eager"] is True  # true → bare flag
    assert got["model.served_model_name"] == ["a", "b"]  # list → --key v1 v2
    assert got["compilation.mode"] == 3  # dict → JSON
    assert got["compilation.cudagraph_mode"] == "PIECEWISE"


def test_config_yaml_false_is_dropped_for_vllm_serve() -> None:
    c = conf("M", "--config", "c.yaml", config_files={"c.yaml": CONFIG})
    assert "cache.enable_prefix_caching" not in c.values()
    assert "yaml-false" in {f.code for f in c.findings}


def test_config_yaml_false_becomes_no_flag_for_the_api_server_module_in_033() -> None:
    argv = ("python3", "-m", "vllm.entrypoints.openai.api_server", "--config", "c.yaml")
    c = normalise(argv, version=V33, config_files={"c.yaml": CONFIG})
    assert c.values()["cache.enable_prefix_caching"] is False
    old = normalise(argv, version=V27, config_files={"c.yaml": CONFIG})
    assert "cache.enable_prefix_caching" not in old.values()


def test_config_model_used_only_without_a_cli_model() -> None:
    assert conf("--config", "c.yaml", config_files={"c.yaml": CONFIG}).model == "from-yaml"
    assert conf("M", "--config", "c.yaml", config_files={"c.yaml": CONFIG}).model == "M"


def test_config_equals_form_is_silently_ignored() -> None:
    c = conf("M", "--config=c.yaml", config_files={"c.yaml": CONFIG})
    assert "scheduler.max_num_seqs" not in c.values()
    assert "config-equals" in {f.code for f in c.findings}


@pytest.mark.parametrize(
    ("args", "files", "code"),
    [
        (("--config", "c.yaml"), None, "config-unread"),
        (("--config", "c.json"), {"c.json": CONFIG}, "config-file"),
        (("--config", "c.yaml", "--config", "d.yaml"), {"c.yaml": CONFIG}, "config-file"),
        (("--config", "c.yaml"), {"c.yaml": "a: [unclosed"}, "config-file"),
    ],
)
def test_config_problems_are_findings(
    args: tuple[str, ...], files: dict[str, str] | None, code: str
) -> None:
    assert code in codes("M", *args, config_files=files)


def test_config_mapping_breaks_before_017() -> None:
    assert "config-file" in errors(
        "M", "--config", "c.yaml", version=V12, config_files={"c.yaml": CONFIG}
    )


# --- §1.3 underscores and dashes -----------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("--max_num_seqs", "8"),
        ("--max-num-seqs=8",),
        ("--max_num_seqs=8",),
        ("--max-num-seqs", "8"),
    ],
)
def test_underscore_and_equals_spellings(args: tuple[str, ...]) -> None:
    assert values("M", *args)["scheduler.max_num_seqs"] == 8


def test_keys_after_the_first_dot_are_not_normalised() -> None:
    assert (
        values("M", "--compilation_config.cudagraph_mode", "FULL")["compilation.cudagraph_mode"]
        == "FULL"
    )
    assert "unknown-config-key" in errors("M", "--compilation-config.cudagraph-mode", "FULL")


def test_speculative_config_keys_get_dashes_replaced() -> None:
    got = values("M", "-sc.num-speculative-tokens", "3", "-sc.method", "mtp")
    assert got["speculative_config"] == {"num_speculative_tokens": 3, "method": "mtp"}
    # two spellings are two dicts: only the later-emitted one survives (§1.8)
    mixed = values("M", "--speculative-config.num_speculative_tokens", "3", "-sc.method", "mtp")
    assert mixed["speculative_config"] == {"method": "mtp"}


# --- §1.4 --flag=value, booleans reject a value --------------------------------------------------


def test_boolean_flags_reject_equals_value() -> None:
    assert "bool-value" in errors("M", "--enable-prefix-caching=false")


def test_missing_value_is_an_error() -> None:
    assert "missing-value" in errors("M", "--max-num-seqs")
    assert "missing-value" in errors("M", "--max-num-seqs", "--enforce-eager")


# --- §1.5 abbreviations --------------------------------------------------------------------------


def test_unique_prefix_expands() -> None:
    c = conf("M", "--max-num-se", "8")
    assert c.values()["scheduler.max_num_seqs"] == 8
    assert "abbreviation" in {f.code for f in c.findings}


def test_ambiguous_prefix_is_an_error() -> None:
    assert "ambiguous" in errors("M", "--max-num", "8")


def test_abbreviation_depends_on_the_version_flag_list() -> None:
    # 0.33 adds --enable-chunked-mm-input as the inverse of --disable-chunked-mm-input
    assert values("M", "--enable-chunk", version=V27)["scheduler.enable_chunked_prefill"] is True
    assert "ambiguous" in errors("M", "--enable-chunk", version=V33)


# --- §1.6 booleans---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "key", "value"),
    [
        (("--enable-prefix-caching",), "cache.enable_prefix_caching", True),
        (("--no-enable-prefix-caching",), "cache.enable_prefix_caching", False),
        (("--disable-prefix-caching",), "cache.enable_prefix_caching", False),
        (("--disable-chunked-prefill",), "scheduler.enable_chunked_prefill", False),
        (("--enable-custom-all-reduce",), "parallel.disable_custom_all_reduce", False),
        (("--no-disable-custom-all-reduce",), "parallel.disable_custom_all_reduce", False),
        (
            ("--enable-prefix-caching", "--no-enable-prefix-caching"),
            "cache.enable_prefix_caching",
            False,
        ),
        (("--disable-log-stats",), "logging.disable_log_stats", True),
        (("--hf-token",), "model.hf_token", True),
        (("--hf-token", "abc"), "model.hf_token", "abc"),
    ],
)
def test_boolean_spellings_in_033(args: tuple[str, ...], key: str, value: Any) -> None:
    assert values("M", *args)[key] == value


@pytest.mark.parametrize(
    "flag", ["--disable-prefix-caching", "--disable-chunked-prefill", "--enable-custom-all-reduce"]
)
def test_inverse_spellings_are_unrecognised_before_033(flag: str) -> None:
    assert "not-in-version" in errors("M", flag, version=V27)


def test_inverse_spelling_between_researched_releases_is_unverified() -> None:
    c = conf("M", "--disable-prefix-caching", version=(0, 30, 0))
    assert not c.errors
    assert "unverified-flag" in {f.code for f in c.findings}


def test_store_true_flags_have_no_negation() -> None:
    assert "unknown-flag" in errors("M", "--no-disable-log-stats")


# --- §1.7 dotted arguments-------------------------------------------------------------------------


def test_dotted_value_is_the_next_token_even_if_it_starts_with_a_dash() -> None:
    assert values("M", "--hf-overrides.name", "-x")["model.hf_overrides"] == {"name": "-x"}


@pytest.mark.parametrize(
    ("raw", "version", "parsed"),
    [
        ("true", V33, True),
        ("True", V33, "True"),  # json.loads fails: kept as the string
        ("3", V33, 3),
        ('{"a":1}', V33, {"a": 1}),
        ("1k", V33, 1000),  # human-readable ints from 0.22
        ("1K", V33, 1024),
        ("1k", V17, "1k"),
    ],
)
def test_dotted_value_parsing(raw: str, version: tuple[int, int, int], parsed: Any) -> None:
    got = values("M", "--hf-overrides.x", raw, version=version)["model.hf_overrides"]
    assert got == {"x": parsed}


def test_typed_configs_coerce_like_pydantic_but_untyped_dicts_do_not() -> None:
    got = values("M", "-cc.use_inductor_graph_partition", "True", "--hf-overrides.flag", "True")
    assert got["compilation.use_inductor_graph_partition"] is True
    assert got["model.hf_overrides"] == {"flag": "True"}


def test_plus_appends_list_elements() -> None:
    got = values("M", "-cc.custom_ops+", "a,b", "-cc.custom_ops+", "c")
    assert got["compilation.custom_ops"] == ["a", "b", "c"]


def test_dotted_pieces_with_the_same_prefix_merge() -> None:
    c = conf("M", "-cc.mode", "3", "-cc.pass_config.fuse_a", "true", "-cc.pass_config.fuse_b=true")
    got = c.values()
    assert got["compilation.mode"] == 3
    assert got["compilation.pass_config"] == {"fuse_a": True, "fuse_b": True}
    assert c.get("compilation.mode") is not None
    assert c.get("compilation.mode").tokens == ("-cc.mode", "3")  # type: ignore[union-attr]


def test_repeated_dotted_leaf_is_a_hazard_last_wins() -> None:
    c = conf("M", "-cc.mode", "1", "-cc.mode", "3")
    assert c.values()["compilation.mode"] == 3
    assert "duplicate-dotted-key" in {f.code for f in c.findings}


def test_dotted_keys_on_a_flag_that_takes_no_json_are_an_error() -> None:
    assert "bad-value" in errors("M", "--max-num-seqs.x", "1")


# --- §1.8 JSON plus dotted: no merge---------------------------------------------------------------

JSON_CC = '{"mode":3,"cudagraph_mode":"PIECEWISE"}'


@pytest.mark.parametrize(
    "args",
    [
        ("--compilation-config", JSON_CC, "--compilation-config.cudagraph_mode", "FULL"),
        ("--compilation-config.cudagraph_mode", "FULL", "--compilation-config", JSON_CC),
        ("-cc", JSON_CC, "-cc.cudagraph_mode", "FULL"),
    ],
)
def test_json_plus_dotted_keeps_only_the_dotted_part(args: tuple[str, ...]) -> None:
    c = conf("M", *args)
    compiled = {k: v for k, v in c.values().items() if k.startswith("compilation.")}
    assert compiled == {"compilation.cudagraph_mode": "FULL"}
    assert "json-and-dotted" in {f.code for f in c.findings}


def test_mixed_dotted_spellings_keep_only_the_later_emitted_dict() -> None:
    c = conf("M", "-cc.mode", "3", "--compilation-config.cudagraph_mode", "FULL")
    compiled = {k: v for k, v in c.values().items() if k.startswith("compilation.")}
    assert compiled == {"compilation.cudagraph_mode": "FULL"}
    assert "mixed-dotted-spellings" in {f.code for f in c.findings}


# --- §1.9 JSON values compared as data -----------------------------------------------------------


@pytest.mark.parametrize("mode", ["3", '"3"', '"VLLM_COMPILE"', '"vllm_compile"'])
def test_compilation_mode_spellings(mode: str) -> None:
    got = values(
        "M",
        "--compilation-config",
        f'{{ "cudagraph_mode" : "full_and_piecewise", "mode": {mode} }}',
    )
    assert got["compilation.mode"] == 3
    assert got["compilation.cudagraph_mode"] == "FULL_AND_PIECEWISE"


def test_capture_sizes_are_a_sorted_set() -> None:
    assert values("M", "-cc", '{"cudagraph_capture_sizes":[8,1,4,8]}')[
        "compilation.cudagraph_capture_sizes"
    ] == [1, 4, 8]
    assert values("M", "--cudagraph-capture-sizes", "8", "1", "4", "8")[
        "compilation.cudagraph_capture_sizes"
    ] == [1, 4, 8]


def test_bad_json_is_a_finding_not_an_exception() -> None:
    assert "bad-json" in errors("M", "--speculative-config", "{not json")
    assert "bad-json" in errors("M", "--compilation-config", "[1, 2]")


def test_speculative_config_is_canonical_data() -> None:
    got = values("M", "-sc", '{"num_speculative_tokens": "2", "method": "deepseek_mtp"}')
    assert got["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 2}


# --- §1.10 repeated flags--------------------------------------------------------------------------


def test_repeated_value_flag_last_wins_with_a_hazard() -> None:
    c = conf("M", "--max-num-seqs", "8", "--max-num-seqs", "16")
    assert c.values()["scheduler.max_num_seqs"] == 16
    assert "duplicate-flag" in {f.code for f in c.findings}


def test_repeated_list_option_keeps_the_last_list() -> None:
    assert values("M", "--served-model-name", "a", "b", "--served-model-name", "c")[
        "model.served_model_name"
    ] == ["c"]


def test_middleware_accumulates() -> None:
    assert values("M", "--middleware", "a.b", "--middleware", "c.d")["frontend.middleware"] == [
        "a.b",
        "c.d",
    ]


# --- §1.11 short aliases---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("short", "value", "key", "expected"),
    [
        ("-tp", "2", "parallel.tensor_parallel_size", 2),
        ("-pp", "2", "parallel.pipeline_parallel_size", 2),
        ("-dp", "4", "parallel.data_parallel_size", 4),
        ("-dcp", "2", "parallel.decode_context_parallel_size", 2),
        ("-pcp", "2", "parallel.prefill_context_parallel_size", 2),
        ("-q", "fp8", "model.quantization", "fp8"),
        ("-n", "2", "parallel.nnodes", 2),
        ("-r", "1", "parallel.node_rank", 1),
        ("-asc", "4", "serve.api_server_count", 4),
        ("-dpn", "0", "parallel.data_parallel_rank", 0),
        ("-dpl", "2", "parallel.data_parallel_size_local", 2),
        ("-dpa", "10.0.0.1", "parallel.data_parallel_address", "10.0.0.1"),
        ("-dpb", "ray", "parallel.data_parallel_backend", "ray"),
        ("--device-memory-utilization", "0.8", "cache.gpu_memory_utilization", 0.8),
    ],
)
def test_short_aliases(short: str, value: str, key: str, expected: Any) -> None:
    assert values("M", short, value)[key] == expected


def test_flag_short_aliases() -> None:
    got = values("M", "-ep", "-dph", "-dpm")
    assert got["parallel.enable_expert_parallel"] is True
    assert got["parallel.data_parallel_hybrid_lb"] is True
    assert got["parallel.data_parallel_multi_port_external_lb"] is True


def test_single_char_short_option_takes_an_attached_value() -> None:
    assert values("M", "-qfp8")["model.quantization"] == "fp8"


def test_aliases_arrive_with_their_release() -> None:
    assert "not-in-version" in errors("M", "-sc", '{"method":"mtp"}', version=V17)
    assert not errors("M", "-sc", '{"method":"mtp"}', version=V22)
    assert "not-in-version" in errors("M", "-ac", '{"backend":"FLASHINFER"}', version=V12)
    assert not errors("M", "-cc", '{"mode":3}', version=V12)


# --- §1.12 -O--------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [("-O3",), ("-O=3",), ("-O", "3"), ("--optimization-level", "3")])
def test_O_spellings(args: tuple[str, ...]) -> None:
    assert values("M", *args)["vllm.optimization_level"] == 3


def test_O_dot_mode_is_an_error_from_017() -> None:
    assert "bad-value" in errors("M", "-O.mode", "3")


def test_O_dot_key_is_the_compilation_config_in_012() -> None:
    c = conf("M", "-O.mode", "3", version=V12)
    assert c.values()["compilation.mode"] == 3
    assert not c.errors


# --- §1.13 alias flags of config fields ----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (
            ("--max-cudagraph-capture-size", "512", "-cc.max_cudagraph_capture_size", "256"),
            "compilation.max_cudagraph_capture_size",
        ),
        (
            ("--cudagraph-capture-sizes", "1", "2", "-cc", '{"cudagraph_capture_sizes":[1]}'),
            "compilation.cudagraph_capture_sizes",
        ),
        (("--attention-backend", "FLASHINFER", "-ac.backend", "FLASH_ATTN"), "attention.backend"),
        (
            ("--enable-flashinfer-autotune", "--kernel-config.enable_flashinfer_autotune", "false"),
            "kernel.enable_flashinfer_autotune",
        ),
        (("--spec-method", "mtp", "-sc.method", "mtp"), "speculative_config"),
    ],
)
def test_setting_both_alias_spellings_is_an_error(args: tuple[str, ...], key: str) -> None:
    c = conf("M", *args)
    assert "mutually-exclusive" in {f.code for f in c.errors}
    assert key in c.values()


def test_alias_flags_fold_into_the_config_key() -> None:
    a = values("M", "--max-cudagraph-capture-size", "512")
    b = values("M", "-cc.max_cudagraph_capture_size", "512")
    assert (
        a["compilation.max_cudagraph_capture_size"]
        == b["compilation.max_cudagraph_capture_size"]
        == 512
    )
    spec = values("M", "--spec-method", "deepseek_mtp", "--spec-tokens", "2")
    assert spec["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 2}


def test_moe_backend_overrides_the_kernel_config_unless_auto() -> None:
    got = values("M", "--kernel-config.moe_backend", "triton", "--moe-backend", "AITER")
    assert got["kernel.moe_backend"] == "aiter"
    assert (
        values("M", "--kernel-config.moe_backend", "triton", "--moe-backend", "auto")[
            "kernel.moe_backend"
        ]
        == "triton"
    )
    assert not errors("M", "--kernel-config.moe_backend", "triton", "--moe-backend", "aiter")


# --- invalid argv: typed findings, never exceptions --------------------------------------------


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("--no-such-flag", "1"), "unknown-flag"),
        (("--max-model-len auto",), "unrecognised"),
        (("--max-num-seqs", "eight"), "bad-value"),
        (("--gpu-memory-utilization", "lots"), "bad-value"),
        (("-ac", '{"use_fp4_indexer_cache": true}'), "unknown-config-key"),
        (("stray", "extra"), "unrecognised"),
    ],
)
def test_invalid_argv_findings(args: tuple[str, ...], code: str) -> None:
    assert code in errors("M", *args)


def test_removed_config_key_is_valid_in_its_releases() -> None:
    assert not errors("M", "-ac", '{"use_fp4_indexer_cache": true}', version=V27)


def test_unresolved_shell_values_are_notes() -> None:
    c = conf("M", "--port", "$PORT", "--data-parallel-rpc-port", "$RPC")
    assert not c.errors
    assert c.values()["frontend.port"] == "$PORT"


def test_entrypoints() -> None:
    api = normalise(("python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "M"))
    assert api.entrypoint == "api_server"
    assert "not-serve" in {f.code for f in normalise(("vllm", "bench", "serve")).errors}
    env_first = normalise(("VLLM_USE_V1=1", "vllm", "serve", "M"))
    assert env_first.model == "M" and not env_first.errors


# --- §5.1 tokenising a launch line --------------------------------------------------------------


def test_split_launch_line_separates_the_env_prefix() -> None:
    env, argv = split_launch_line(
        'VLLM_ROCM_USE_AITER=1 A=b vllm serve M \\\n  --speculative-config \'{"method": "mtp"}\''
    )
    assert env == {"VLLM_ROCM_USE_AITER": "1", "A": "b"}
    assert argv == ("vllm", "serve", "M", "--speculative-config", '{"method": "mtp"}')
