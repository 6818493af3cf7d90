"""The ``vllm serve`` flags, as data: spelling, canonical key, argparse shape, versions.

This is the flag list the normaliser expands abbreviations against, so it aims to be the
*whole* 0.33 surface: engine args (``vllm/engine/arg_utils.py add_cli_args``), front-end args
(``vllm/entrypoints/common/cli_args.py``), the serve-only args (``--headless``, ``-asc``,
``--config``, ``--grpc``), plus every flag the recipes corpus uses (vllm-omni's included).
Sources: ``docs/vllm-cli-semantics.md`` (0.12–0.33 releases) and the indexed
``vllm-project/vllm`` sources for flags the doc does not list.

Versions: ``since`` is the first researched release known to have a spelling (0.12 when the
flag predates the researched range or its introduction is not documented: unknown-version
flags are accepted rather than reported as errors); ``until`` the last one. Between two
researched releases that disagree, availability is "unverified" (see ``versions``).
"""

from __future__ import annotations

# ruff: noqa: E501 -- one flag per line reads best as a table
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Final, Literal

from bot.vllm.versions import Availability, Version, span_status

# value: one argument; bool: BooleanOptionalAction (--x / --no-x); store_true: bare only;
# optional: nargs="?" (bare means True); list: nargs="+"; append: repeated and accumulated;
# config: a typed config dataclass parsed from JSON (dotted keys allowed); dict: plain JSON;
# level: -O / --optimization-level; path: --config FILE (spliced by the preprocessor).
Kind = Literal[
    "value", "bool", "store_true", "optional", "list", "append", "config", "dict", "level", "path"
]
# How a scalar value is canonicalised (see bot.vllm.values).
ValueType = Literal["str", "int", "float", "hint", "lower_us", "upper", "dtype", "max_model_len"]
Category = Literal["engine", "api", "tracing", "topology", "front-end"]

V0_12: Version = (0, 12, 0)
V0_17: Version = (0, 17, 0)
V0_22: Version = (0, 22, 0)
V0_27_1: Version = (0, 27, 1)
V0_33: Version = (0, 33, 0)


@dataclass(frozen=True)
class Spelling:
    """One option string and the versions that accept it."""

    text: str
    since: Version = V0_12
    until: Version | None = None


@dataclass(frozen=True)
class FlagSpec:
    long: str  # canonical long spelling, e.g. "--max-num-seqs"
    key: str  # canonical key, e.g. "scheduler.max_num_seqs"
    kind: Kind = "value"
    vtype: ValueType = "str"
    category: Category = "engine"
    aliases: tuple[Spelling, ...] = ()
    since: Version = V0_12
    until: Version | None = None
    # config flags whose JSON fields are compared one by one under "<explode>.<field>"
    explode: str | None = None
    # a flag that is an alias of a config field: (config key, field), e.g. --attention-backend
    fold: tuple[str, str] | None = None
    plugin: str | None = None  # e.g. "vllm-omni": only present with that plugin installed
    note: str = ""

    @property
    def dest(self) -> str:
        """argparse destination: aliases of one option share it (``-cc`` and the long one)."""
        return self.long.lstrip("-").replace("-", "_")


def _f(
    long: str,
    key: str,
    kind: Kind = "value",
    vtype: ValueType = "str",
    category: Category = "engine",
    *aliases: str | Spelling,
    since: Version = V0_12,
    until: Version | None = None,
    explode: str | None = None,
    fold: tuple[str, str] | None = None,
    plugin: str | None = None,
    note: str = "",
) -> FlagSpec:
    spelled = tuple(a if isinstance(a, Spelling) else Spelling(a, since, until) for a in aliases)
    return FlagSpec(
        long, key, kind, vtype, category, spelled, since, until, explode, fold, plugin, note
    )


E: Final = "engine"
A: Final = "api"
T: Final = "tracing"
P: Final = "topology"
F: Final = "front-end"

# fmt: off
FLAGS: tuple[FlagSpec, ...] = (
    # --- ModelConfig --------------------------------------------------------------------
    _f("--model", "model", "value", "str", E, note="moved to the positional slot (docs/spec/vllm-cli-semantics.md §1.1)"),
    _f("--runner", "model.runner"),
    _f("--convert", "model.convert"),
    _f("--task", "model.task", note="deprecated"),
    _f("--tokenizer", "model.tokenizer"),
    _f("--tokenizer-mode", "model.tokenizer_mode"),
    _f("--trust-remote-code", "model.trust_remote_code", "bool"),
    _f("--dtype", "model.dtype", "value", "dtype"),
    _f("--seed", "model.seed", "value", "int"),
    _f("--hf-config-path", "model.hf_config_path"),
    _f("--allowed-local-media-path", "model.allowed_local_media_path", category=A),
    _f("--allowed-media-domains", "model.allowed_media_domains", "list", category=A),
    _f("--revision", "model.revision"),
    _f("--code-revision", "model.code_revision"),
    _f("--rope-scaling", "model.rope_scaling", "dict"),
    _f("--rope-theta", "model.rope_theta", "value", "float"),
    _f("--tokenizer-revision", "model.tokenizer_revision"),
    _f("--max-model-len", "model.max_model_len", "value", "max_model_len"),
    _f("--quantization", "model.quantization", "value", "str", E, "-q"),
    _f("--enforce-eager", "model.enforce_eager", "bool"),
    _f("--max-logprobs", "model.max_logprobs", "value", "int", A),
    _f("--logprobs-mode", "model.logprobs_mode", category=A),
    _f("--disable-sliding-window", "model.disable_sliding_window", "bool"),
    _f("--disable-cascade-attn", "model.disable_cascade_attn", "bool"),
    _f("--skip-tokenizer-init", "model.skip_tokenizer_init", "bool"),
    _f("--enable-prompt-embeds", "model.enable_prompt_embeds", "bool", category=A),
    _f("--served-model-name", "model.served_model_name", "list", category=F),
    _f("--config-format", "model.config_format"),
    _f("--hf-token", "model.hf_token", "optional", category=F),
    _f("--hf-overrides", "model.hf_overrides", "dict"),
    _f("--pooler-config", "model.pooler_config", "config"),
    _f("--override-pooler-config", "model.override_pooler_config", "dict"),
    _f("--logits-processor-pattern", "model.logits_processor_pattern", category=A),
    _f("--generation-config", "model.generation_config", category=A),
    _f("--override-generation-config", "model.override_generation_config", "dict", category=A),
    _f("--enable-sleep-mode", "model.enable_sleep_mode", "bool"),
    _f("--model-impl", "model.model_impl"),
    _f("--override-attention-dtype", "model.override_attention_dtype"),
    _f("--logits-processors", "model.logits_processors", "list", category=A),
    _f("--io-processor-plugin", "model.io_processor_plugin", category=A),
    _f("--language-model-only", "model.language_model_only", "bool", note="multimodal models: text only"),
    _f("--reasoning-config", "reasoning_config", "config", category=A),
    # --- LoadConfig ---------------------------------------------------------------------
    _f("--load-format", "load.load_format"),
    _f("--download-dir", "load.download_dir", category=F),
    _f("--safetensors-load-strategy", "load.safetensors_load_strategy"),
    _f("--model-loader-extra-config", "load.model_loader_extra_config", "dict"),
    _f("--ignore-patterns", "load.ignore_patterns", "list"),
    _f("--use-tqdm-on-load", "load.use_tqdm_on_load", "bool", category=F),
    _f("--pt-load-map-location", "load.pt_load_map_location"),
    # --- StructuredOutputsConfig --------------------------------------------------------
    _f("--reasoning-parser", "structured_outputs.reasoning_parser", category=A),
    _f("--reasoning-parser-plugin", "structured_outputs.reasoning_parser_plugin", category=A),
    _f("--structured-outputs-config", "structured_outputs_config", "config", category=A),
    # --- ParallelConfig -----------------------------------------------------------------
    _f("--distributed-executor-backend", "parallel.distributed_executor_backend"),
    _f("--pipeline-parallel-size", "parallel.pipeline_parallel_size", "value", "int", E, "-pp"),
    _f("--tensor-parallel-size", "parallel.tensor_parallel_size", "value", "int", E, "-tp"),
    _f("--decode-context-parallel-size", "parallel.decode_context_parallel_size", "value", "int", E, "-dcp"),
    _f("--prefill-context-parallel-size", "parallel.prefill_context_parallel_size", "value", "int", E, "-pcp"),
    _f("--dcp-comm-backend", "parallel.dcp_comm_backend"),
    _f("--data-parallel-size", "parallel.data_parallel_size", "value", "int", E, "-dp"),
    _f("--data-parallel-rank", "parallel.data_parallel_rank", "value", "int", P, "-dpn"),
    _f("--data-parallel-start-rank", "parallel.data_parallel_start_rank", "value", "int", P, "-dpr"),
    _f("--data-parallel-size-local", "parallel.data_parallel_size_local", "value", "int", P, "-dpl"),
    _f("--data-parallel-address", "parallel.data_parallel_address", "value", "str", P, "-dpa"),
    _f("--data-parallel-rpc-port", "parallel.data_parallel_rpc_port", "value", "int", P, "-dpp"),
    _f("--data-parallel-backend", "parallel.data_parallel_backend", "value", "str", E, "-dpb"),
    _f("--data-parallel-hybrid-lb", "parallel.data_parallel_hybrid_lb", "bool", "str", P, "-dph"),
    _f("--data-parallel-external-lb", "parallel.data_parallel_external_lb", "bool", "str", P, "-dpe"),
    _f("--data-parallel-multi-port-external-lb", "parallel.data_parallel_multi_port_external_lb", "store_true", "str", P, "-dpm"),
    _f("--nnodes", "parallel.nnodes", "value", "int", P, "-n"),
    _f("--node-rank", "parallel.node_rank", "value", "int", P, "-r"),
    _f("--master-addr", "parallel.master_addr", category=P),
    _f("--master-port", "parallel.master_port", "value", "int", P),
    _f("--enable-expert-parallel", "parallel.enable_expert_parallel", "bool", "str", E, "-ep"),
    _f("--all2all-backend", "parallel.all2all_backend"),
    _f("--enable-dbo", "parallel.enable_dbo", "bool"),
    _f("--ubatch-size", "parallel.ubatch_size", "value", "int"),
    _f("--dbo-decode-token-threshold", "parallel.dbo_decode_token_threshold", "value", "int"),
    _f("--dbo-prefill-token-threshold", "parallel.dbo_prefill_token_threshold", "value", "int"),
    _f("--disable-nccl-for-dp-synchronization", "parallel.disable_nccl_for_dp_synchronization", "bool"),
    _f("--enable-eplb", "parallel.enable_eplb", "bool"),
    _f("--eplb-config", "parallel.eplb_config", "config"),
    _f("--expert-placement-strategy", "parallel.expert_placement_strategy"),
    _f("--enable-elastic-ep", "parallel.enable_elastic_ep", "bool"),
    _f("--max-parallel-loading-workers", "parallel.max_parallel_loading_workers", "value", "int"),
    _f("--ray-workers-use-nsight", "parallel.ray_workers_use_nsight", "bool", category=T),
    _f("--disable-custom-all-reduce", "parallel.disable_custom_all_reduce", "bool"),
    _f("--distributed-timeout-seconds", "parallel.distributed_timeout_seconds", "value", "int", P),
    _f("--worker-cls", "parallel.worker_cls"),
    _f("--worker-extension-cls", "parallel.worker_extension_cls"),
    # --- serve-only arguments (vllm/entrypoints/openai/cli_args.py make_arg_parser) ------
    _f("--headless", "serve.headless", "store_true", category=P),
    _f("--api-server-count", "serve.api_server_count", "value", "int", P, "-asc"),
    _f("--config", "serve.config", "path", category=F, note="YAML spliced by the preprocessor"),
    _f("--grpc", "serve.grpc", "store_true", category=F),
    # --- CacheConfig --------------------------------------------------------------------
    _f("--block-size", "cache.block_size", "value", "int"),
    _f("--gpu-memory-utilization", "cache.gpu_memory_utilization", "value", "float", E,
       Spelling("--device-memory-utilization", V0_33)),
    _f("--kv-cache-memory-bytes", "cache.kv_cache_memory_bytes", "value", "hint"),
    _f("--swap-space", "cache.swap_space", "value", "float"),
    _f("--kv-cache-dtype", "cache.cache_dtype"),
    _f("--num-gpu-blocks-override", "cache.num_gpu_blocks_override", "value", "int"),
    _f("--enable-prefix-caching", "cache.enable_prefix_caching", "bool"),
    _f("--prefix-caching-hash-algo", "cache.prefix_caching_hash_algo"),
    _f("--cpu-offload-gb", "cache.cpu_offload_gb", "value", "float"),
    _f("--calculate-kv-scales", "cache.calculate_kv_scales", "bool"),
    _f("--kv-sharing-fast-prefill", "cache.kv_sharing_fast_prefill", "bool"),
    _f("--kv-offloading-size", "cache.kv_offloading_size", "value", "float"),
    _f("--kv-offloading-backend", "cache.kv_offloading_backend"),
    _f("--mamba-cache-dtype", "cache.mamba_cache_dtype"),
    _f("--mamba-ssm-cache-dtype", "cache.mamba_ssm_cache_dtype"),
    _f("--mamba-block-size", "cache.mamba_block_size", "value", "int"),
    _f("--mamba-cache-mode", "cache.mamba_cache_mode"),
    _f("--mamba-backend", "kernel.mamba_backend", "value", "lower_us"),
    _f("--enable-mamba-cache-stochastic-rounding", "cache.enable_mamba_cache_stochastic_rounding", "bool"),
    _f("--mamba-cache-philox-rounds", "cache.mamba_cache_philox_rounds", "value", "int"),
    _f("--mamba-ssu-algorithm", "kernel.mamba_ssu_algorithm"),
    # --- MultiModalConfig ---------------------------------------------------------------
    _f("--limit-mm-per-prompt", "multimodal.limit_mm_per_prompt", "dict"),
    _f("--enable-mm-embeds", "multimodal.enable_mm_embeds", "bool", category=A),
    _f("--media-io-kwargs", "multimodal.media_io_kwargs", "dict"),
    _f("--mm-processor-kwargs", "multimodal.mm_processor_kwargs", "dict"),
    _f("--mm-processor-cache-gb", "multimodal.mm_processor_cache_gb", "value", "float"),
    _f("--mm-processor-cache-type", "multimodal.mm_processor_cache_type"),
    _f("--mm-shm-cache-max-object-size-mb", "multimodal.mm_shm_cache_max_object_size_mb", "value", "int"),
    _f("--mm-encoder-tp-mode", "multimodal.mm_encoder_tp_mode"),
    _f("--mm-encoder-attn-backend", "multimodal.mm_encoder_attn_backend", "value", "upper"),
    _f("--interleave-mm-strings", "multimodal.interleave_mm_strings", "bool", category=A),
    _f("--skip-mm-profiling", "multimodal.skip_mm_profiling", "bool"),
    _f("--video-pruning-rate", "multimodal.video_pruning_rate", "value", "float"),
    # --- LoRAConfig ---------------------------------------------------------------------
    _f("--enable-lora", "lora.enable_lora", "bool"),
    _f("--max-loras", "lora.max_loras", "value", "int"),
    _f("--max-lora-rank", "lora.max_lora_rank", "value", "int"),
    _f("--lora-dtype", "lora.lora_dtype"),
    _f("--max-cpu-loras", "lora.max_cpu_loras", "value", "int"),
    _f("--fully-sharded-loras", "lora.fully_sharded_loras", "bool"),
    _f("--default-mm-loras", "lora.default_mm_loras", "dict"),
    # --- ObservabilityConfig (tracing class, §4) -----------------------------------------
    _f("--show-hidden-metrics-for-version", "observability.show_hidden_metrics_for_version", category=T),
    _f("--otlp-traces-endpoint", "observability.otlp_traces_endpoint", category=T),
    _f("--collect-detailed-traces", "observability.collect_detailed_traces", "list", category=T),
    _f("--kv-cache-metrics", "observability.kv_cache_metrics", "bool", category=T),
    _f("--kv-cache-metrics-sample", "observability.kv_cache_metrics_sample", "value", "float", T),
    _f("--cudagraph-metrics", "observability.cudagraph_metrics", "bool", category=T),
    _f("--enable-layerwise-nvtx-tracing", "observability.enable_layerwise_nvtx_tracing", "bool", category=T),
    _f("--enable-mfu-metrics", "observability.enable_mfu_metrics", "bool", category=T),
    _f("--per-request-spec-decode-metrics", "observability.per_request_spec_decode_metrics", "bool", category=T),
    _f("--profiler-config", "profiler_config", "config", category=T),
    # --- SchedulerConfig ----------------------------------------------------------------
    _f("--max-num-batched-tokens", "scheduler.max_num_batched_tokens", "value", "hint"),
    _f("--max-num-seqs", "scheduler.max_num_seqs", "value", "int"),
    _f("--max-num-partial-prefills", "scheduler.max_num_partial_prefills", "value", "int"),
    _f("--max-long-partial-prefills", "scheduler.max_long_partial_prefills", "value", "int"),
    _f("--long-prefill-token-threshold", "scheduler.long_prefill_token_threshold", "value", "int"),
    _f("--num-lookahead-slots", "scheduler.num_lookahead_slots", "value", "int"),
    _f("--scheduling-policy", "scheduler.policy"),
    _f("--enable-chunked-prefill", "scheduler.enable_chunked_prefill", "bool"),
    _f("--disable-chunked-mm-input", "scheduler.disable_chunked_mm_input", "bool"),
    _f("--scheduler-cls", "scheduler.scheduler_cls"),
    _f("--disable-hybrid-kv-cache-manager", "scheduler.disable_hybrid_kv_cache_manager", "bool"),
    _f("--async-scheduling", "scheduler.async_scheduling", "bool"),
    _f("--stream-interval", "scheduler.stream_interval", "value", "int", A),
    # --- CompilationConfig and its alias flags (docs/spec/vllm-cli-semantics.md §1.13) ----------------------------------
    _f("--cudagraph-capture-sizes", "compilation.cudagraph_capture_sizes", "list", "int",
       fold=("compilation_config", "cudagraph_capture_sizes")),
    _f("--cuda-graph-sizes", "compilation.cudagraph_capture_sizes", "list", "int",
       until=V0_12, fold=("compilation_config", "cudagraph_capture_sizes"),
       note="deprecated spelling of --cudagraph-capture-sizes"),
    _f("--max-cudagraph-capture-size", "compilation.max_cudagraph_capture_size", "value", "int",
       fold=("compilation_config", "max_cudagraph_capture_size")),
    _f("--compilation-config", "compilation_config", "config", "str", E, "-cc", explode="compilation"),
    _f("--optimization-level", "vllm.optimization_level", "level", "int"),
    _f("--performance-mode", "vllm.performance_mode", since=V0_17),
    # --- attention / kernel / speculative (VllmConfig) ----------------------------------
    _f("--attention-config", "attention_config", "config", "str", E, "-ac", since=V0_17, explode="attention"),
    _f("--attention-backend", "attention.backend", "value", "upper", fold=("attention_config", "backend")),
    _f("--kernel-config", "kernel_config", "config", explode="kernel"),
    _f("--moe-backend", "kernel.moe_backend", "value", "lower_us", since=V0_17, fold=("kernel_config", "moe_backend")),
    _f("--linear-backend", "kernel.linear_backend", "value", "lower_us"),
    _f("--enable-flashinfer-autotune", "kernel.enable_flashinfer_autotune", "bool",
       fold=("kernel_config", "enable_flashinfer_autotune")),
    _f("--speculative-config", "speculative_config", "dict", "str", E, Spelling("-sc", V0_22)),
    _f("--spec-method", "speculative_config.method", since=V0_22, fold=("speculative_config", "method")),
    _f("--spec-model", "speculative_config.model", since=V0_22, fold=("speculative_config", "model")),
    _f("--spec-tokens", "speculative_config.num_speculative_tokens", "value", "int", since=V0_22,
       fold=("speculative_config", "num_speculative_tokens")),
    _f("--kv-transfer-config", "kv_transfer_config", "config"),
    _f("--kv-events-config", "kv_events_config", "config", category=T),
    _f("--ec-transfer-config", "ec_transfer_config", "config"),
    _f("--weight-transfer-config", "weight_transfer_config", "config"),
    _f("--diffusion-config", "diffusion_config", "config", "str", E, "-dc"),
    _f("--additional-config", "additional_config", "dict"),
    # --- logging (front-end, §4) ---------------------------------------------------------
    _f("--disable-log-stats", "logging.disable_log_stats", "store_true", category=F),
    _f("--aggregate-engine-logging", "logging.aggregate_engine_logging", "store_true", category=F),
    _f("--enable-log-requests", "logging.enable_log_requests", "bool", category=F),
    _f("--disable-log-requests", "logging.disable_log_requests", "store_true", category=F,
       until=V0_12, note="≤0.12: deprecated store_true; 0.33: inverse of --enable-log-requests"),
    _f("--log-level", "logging.log_level", category=F),
    _f("--logging-config", "logging_config", "config", category=F),
    _f("--log-config-file", "logging.log_config_file", category=F),
    _f("--max-log-len", "logging.max_log_len", "value", "int", F),
    _f("--enable-log-outputs", "logging.enable_log_outputs", "bool", category=F),
    _f("--enable-log-deltas", "logging.enable_log_deltas", "bool", category=F),
    _f("--log-error-stack", "logging.log_error_stack", "bool", category=F),
    # --- FrontendArgs: network and identity ---------------------------------------------
    _f("--host", "frontend.host", category=F),
    _f("--port", "frontend.port", "value", "int", F),
    _f("--uds", "frontend.uds", category=F),
    _f("--grpc-port", "frontend.grpc_port", "value", "int", F),
    _f("--root-path", "frontend.root_path", category=F),
    _f("--api-key", "frontend.api_key", "list", category=F),
    _f("--ssl-keyfile", "frontend.ssl_keyfile", category=F),
    _f("--ssl-certfile", "frontend.ssl_certfile", category=F),
    _f("--ssl-ca-certs", "frontend.ssl_ca_certs", category=F),
    _f("--enable-ssl-refresh", "frontend.enable_ssl_refresh", "bool", category=F),
    _f("--ssl-cert-reqs", "frontend.ssl_cert_reqs", "value", "int", F),
    _f("--ssl-ciphers", "frontend.ssl_ciphers", category=F),
    _f("--allowed-origins", "frontend.allowed_origins", "dict", category=F),
    _f("--allowed-methods", "frontend.allowed_methods", "dict", category=F),
    _f("--allowed-headers", "frontend.allowed_headers", "dict", category=F),
    _f("--allow-credentials", "frontend.allow_credentials", "bool", category=F),
    _f("--middleware", "frontend.middleware", "append", category=F),
    _f("--enable-request-id-headers", "frontend.enable_request_id_headers", "bool", category=F),
    _f("--disable-fastapi-docs", "frontend.disable_fastapi_docs", "bool", category=F),
    _f("--enable-offline-docs", "frontend.enable_offline_docs", "bool", category=F),
    _f("--uvicorn-log-level", "frontend.uvicorn_log_level", category=F),
    _f("--disable-uvicorn-access-log", "frontend.disable_uvicorn_access_log", "bool", category=F),
    _f("--disable-access-log-for-endpoints", "frontend.disable_access_log_for_endpoints", category=F),
    _f("--h11-max-incomplete-event-size", "frontend.h11_max_incomplete_event_size", "value", "int", F),
    _f("--h11-max-header-count", "frontend.h11_max_header_count", "value", "int", F),
    _f("--data-parallel-supervisor-port", "frontend.data_parallel_supervisor_port", "value", "int", F),
    _f("--dp-supervisor-probe-interval-s", "frontend.dp_supervisor_probe_interval_s", "value", "float", F),
    _f("--dp-supervisor-probe-timeout-s", "frontend.dp_supervisor_probe_timeout_s", "value", "float", F),
    _f("--dp-supervisor-probe-failure-threshold", "frontend.dp_supervisor_probe_failure_threshold", "value", "int", F),
    _f("--enable-server-load-tracking", "frontend.enable_server_load_tracking", "bool", category=F),
    _f("--enable-per-request-metrics", "frontend.enable_per_request_metrics", "bool", category=F),
    _f("--enable-tokenizer-info-endpoint", "frontend.enable_tokenizer_info_endpoint", "bool", category=F),
    _f("--tokens-only", "frontend.tokens_only", "bool", category=F),
    _f("--fingerprint-mode", "frontend.fingerprint_mode", category=F),
    _f("--fingerprint-value", "frontend.fingerprint_value", category=F),
    # --- FrontendArgs: response shaping (API class, §4) ---------------------------------
    _f("--lora-modules", "api.lora_modules", "list", category=A),
    _f("--chat-template", "api.chat_template", category=A),
    _f("--chat-template-content-format", "api.chat_template_content_format", category=A),
    _f("--trust-request-chat-template", "api.trust_request_chat_template", "bool", category=A),
    _f("--default-chat-template-kwargs", "api.default_chat_template_kwargs", "dict", category=A),
    _f("--response-role", "api.response_role", category=A),
    _f("--return-tokens-as-token-ids", "api.return_tokens_as_token_ids", "bool", category=A),
    _f("--enable-auto-tool-choice", "api.enable_auto_tool_choice", "bool", category=A),
    _f("--exclude-tools-when-tool-choice-none", "api.exclude_tools_when_tool_choice_none", "bool", category=A),
    _f("--tool-call-parser", "api.tool_call_parser", category=A),
    _f("--tool-parser-plugin", "api.tool_parser_plugin", category=A),
    _f("--tool-call-parser-plugin", "api.tool_call_parser_plugin", category=A,
       note="spelled by the recipes corpus (Nemotron); assumed accepted by 0.33"),
    _f("--tool-server", "api.tool_server", category=A),
    _f("--enable-prompt-tokens-details", "api.enable_prompt_tokens_details", "bool", category=A),
    _f("--enable-force-include-usage", "api.enable_force_include_usage", "bool", category=A),
    _f("--reasoning-effort-map", "api.reasoning_effort_map", "dict", category=A),
    _f("--sse-keep-alive-interval", "api.sse_keep_alive_interval", "value", "float", A),
    # --- vllm-omni plugin (diffusion / TTS recipes; `vllm serve ... --omni`) -------------
    _f("--omni", "omni.omni", "store_true", plugin="vllm-omni"),
    _f("--num-gpus", "omni.num_gpus", "value", "int", plugin="vllm-omni"),
    _f("--task-type", "omni.task_type", plugin="vllm-omni"),
    _f("--deploy-config", "omni.deploy_config", plugin="vllm-omni"),
    _f("--init-timeout", "omni.init_timeout", "value", "int", P, plugin="vllm-omni"),
    _f("--stage-init-timeout", "omni.stage_init_timeout", "value", "int", P, plugin="vllm-omni"),
    _f("--model-class-name", "omni.model_class_name", plugin="vllm-omni"),
    _f("--usp", "omni.usp", "value", "int", plugin="vllm-omni"),
    _f("--ring", "omni.ring", "value", "int", plugin="vllm-omni"),
    _f("--ulysses-degree", "omni.ulysses_degree", "value", "int", plugin="vllm-omni"),
    _f("--cfg-parallel-size", "omni.cfg_parallel_size", "value", "int", plugin="vllm-omni"),
    _f("--use-hsdp", "omni.use_hsdp", "store_true", plugin="vllm-omni"),
    _f("--hsdp-shard-size", "omni.hsdp_shard_size", "value", "int", plugin="vllm-omni"),
    _f("--text-encoder-tp-size", "omni.text_encoder_tp_size", "value", "int", plugin="vllm-omni"),
    _f("--vae-parallel-mode", "omni.vae_parallel_mode", plugin="vllm-omni"),
    _f("--vae-patch-parallel-size", "omni.vae_patch_parallel_size", "value", "int", plugin="vllm-omni"),
    _f("--vae-use-tiling", "omni.vae_use_tiling", "store_true", plugin="vllm-omni"),
    _f("--diffusion-attention-backend", "omni.diffusion_attention_backend", "value", "upper", plugin="vllm-omni"),
    _f("--enable-distributed-layerwise-offload", "omni.enable_distributed_layerwise_offload", "store_true", plugin="vllm-omni"),
    _f("--dlo-no-use-allgather", "omni.dlo_no_use_allgather", "store_true", plugin="vllm-omni"),
    _f("--dlo-resident-layers", "omni.dlo_resident_layers", "value", "int", plugin="vllm-omni"),
    _f("--ignored-layers", "omni.ignored_layers", plugin="vllm-omni"),
)
# fmt: on

# Fields of typed config dataclasses that exist only in some releases (docs/spec/vllm-cli-semantics.md §3). Unknown fields
# in general are not validated (the field lists are not researched), these are.
CONFIG_FIELD_SPANS: Mapping[tuple[str, str], tuple[Version, Version | None]] = {
    ("attention", "use_fp4_indexer_cache"): (V0_22, V0_27_1),
    ("attention", "indexer_kv_dtype"): (V0_27_1, None),
}

# Inverse spellings added to every BooleanOptionalAction by 0.33's EnableDisableAction (docs/spec/vllm-cli-semantics.md §1.6).
ENABLE_DISABLE_SINCE: Version = V0_33


@dataclass(frozen=True)
class Option:
    """An option string as argparse knows it: which flag, and whether it negates."""

    text: str
    spec: FlagSpec
    negated: bool  # --no-x, or 0.33's inverse --disable-x / --enable-x
    since: Version
    until: Version | None
    generated: str = ""  # why the spelling exists when it is not written in FLAGS


@dataclass(frozen=True)
class FlagTable:
    """Every option string of every version; lookups filter by version."""

    options: Mapping[str, tuple[Option, ...]] = field(default_factory=dict)
    by_long: Mapping[str, FlagSpec] = field(default_factory=dict)

    def lookup(self, text: str, version: Version) -> tuple[Option, Availability] | None:
        """The option spelled exactly ``text`` in ``version``: (option, availability)."""
        best: tuple[Option, Availability] | None = None
        for option in self.options.get(text, ()):
            status = span_status(version, option.since, option.until)
            if status == "yes":
                return option, status
            if best is None or (status == "unverified" and best[1] == "no"):
                best = (option, status)
        return best

    def prefix_matches(self, prefix: str, version: Version) -> list[Option]:
        """Options ``prefix`` abbreviates in ``version`` (argparse ``allow_abbrev``)."""
        found: dict[str, Option] = {}
        for text, options in self.options.items():
            if text.startswith(prefix):
                for option in options:
                    if span_status(version, option.since, option.until) != "no":
                        found[text] = option
                        break
        return list(found.values())


def _spellings(spec: FlagSpec) -> Iterable[Option]:
    yield Option(spec.long, spec, False, spec.since, spec.until)
    for alias in spec.aliases:
        yield Option(alias.text, spec, False, alias.since, alias.until)
    if spec.kind != "bool":
        return
    for text in (spec.long, *(a.text for a in spec.aliases if a.text.startswith("--"))):
        yield Option(
            f"--no-{text[2:]}", spec, True, spec.since, spec.until, "BooleanOptionalAction"
        )
    for positive, inverse in (("--enable-", "--disable-"), ("--disable-", "--enable-")):
        if spec.long.startswith(positive):
            yield Option(
                inverse + spec.long[len(positive) :],
                spec,
                True,
                max(spec.since, ENABLE_DISABLE_SINCE),
                spec.until,
                "EnableDisableAction (0.33)",
            )


@cache
def flag_table() -> FlagTable:
    options: dict[str, list[Option]] = {}
    for spec in FLAGS:
        for option in _spellings(spec):
            options.setdefault(option.text, []).append(option)
    return FlagTable(
        options={k: tuple(v) for k, v in options.items()},
        by_long={spec.long: spec for spec in FLAGS},
    )


def canonical_flag(text: str) -> str:
    """The canonical long name of any spelling of a flag, in any version: ``--no-x`` and
    0.33's ``--disable-x`` inverse are ``--x``, aliases their long name, ``_`` is ``-`` (up to
    the first dot; a dotted ``--x.key`` keeps its key). Unknown flags are returned as given
    (only ``_`` folded), so one subject names one flag wherever it is compared."""
    if not text.startswith("--"):
        short = flag_table().options.get(text, ()) if text.startswith("-") else ()
        return short[0].spec.long if short else text
    head, dot, tail = text.partition("=")[0][2:].partition(".")
    name = "--" + head.replace("_", "-")
    options = flag_table().options.get(name, ())
    if options:
        plain = [o for o in options if not o.negated]
        name = (plain or list(options))[0].spec.long
    return name + dot + tail
