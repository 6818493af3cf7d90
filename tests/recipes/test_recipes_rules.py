"""Rendering rules (recipe-rendering.md §2–§5) on small synthetic recipes.

Each expectation is derived by hand from the spec's rules, for inputs the JSON API never
renders (non-default variants, selected modes, explicit feature sets, 1–3 nodes, PD shapes).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.recipes import RecipesRepo, RenderRequest, build_api, render

MakeRepo = Callable[..., RecipesRepo]

LAYERS = """
meta:
  title: Layers
  tasks: [text]
model:
  model_id: test/Layers
  base_args:
    - "--x=1"
    - "--x"
    - "2"
    - "--flag"
    - "stray"
    - "--a"
    - "1"
    - ""
    - "--a"
    - "2"
    - "--empty"
    - ""
    - "-1"
  base_env:
    BASE: "1"
    PYTHONHASHSEED: 0
    FLAG: true
    RATIO: 1.0
features:
  tools:
    args: ["--tool-call-parser", "t"]
variants:
  default:
    vram_minimum_gb: 100
compatible_strategies:
  - single_node_tp
  - multi_node_tp
  - multi_node_tp_pp
  - multi_node_tp_dp
"""

GEN = """
meta: {title: Gen, tasks: [text]}
model:
  model_id: test/Gen
  base_args: ["--base", "b"]
variants:
  default:
    vram_minimum_gb: 10
    extra_args: ["--variant", "v"]
    extra_env: {VAR_ENV: "v"}
    hardware_overrides:
      mi355x:
        extra_args: ["--x", "variant-exact"]
        extra_env: {X_ENV: "variant-exact"}
      amd:
        extra_args: ["--vgen", "amd"]
      hopper:
        extra_args: ["--vgen", "hopper"]
        extra_env: {VGEN_ENV: "hopper"}
      nvidia:
        extra_args: ["--vgen", "nvidia"]
hardware_overrides:
  amd:
    extra_args: ["--x", "recipe-amd"]
    extra_env: {X_ENV: "recipe-amd"}
  hopper:
    extra_args: ["--rgen", "hopper"]
    extra_env: {RGEN_ENV: "hopper"}
  nvidia:
    extra_args: ["--rgen", "nvidia"]
  h200:
    extra_args: ["--never", "1"]
compatible_strategies: [single_node_tp, single_node_tep, single_node_dep, multi_node_dep]
strategy_overrides:
  single_node_tp:
    extra_args: ["--so", "tp"]
    hardware_overrides:
      mi355x:
        extra_args: ["--x", "strategy-exact"]
      hopper: {}
  single_node_tep:
    hardware_overrides:
      hopper:
        extra_env: {SO_ENV: "hopper"}
  multi_node_dep:
    extra_args: ["--data-parallel-size-local", "4"]
"""

TP = """
meta:
  title: Tp
  tasks: [text]
  hardware: {xeon6: verified, arc_pro_b60: verified}
model:
  model_id: test/Tp
variants:
  default: {vram_minimum_gb: 200}
  small: {vram_minimum_gb: 100}
  pinned: {vram_minimum_gb: 10, tp: {h200: 4, amd: 16, default: 2}}
  cpu: {tp: 16}
compatible_strategies: [single_node_tp, single_node_tep]
strategy_overrides:
  single_node_tp:
    tp: {xeon6: 2}
"""

FEATURES = """
meta: {title: Feat, tasks: [text]}
model:
  model_id: test/Feat
features:
  flat:
    args: ["--flat", "base"]
    hardware_overrides:
      hopper: {args: ["--flat", "hopper"]}
      nvidia: {args: ["--flat", "nvidia"]}
      amd: {}
  emptied:
    args: ["--emptied", "x"]
    hardware_overrides:
      blackwell: {args: []}
  optin:
    args: ["--optin"]
  only_tep:
    strategies: [single_node_tep]
    args: ["--only-tep"]
  spec:
    default_mode: m1
    modes:
      m1:
        variants: [default]
        args: ["--spec", "m1"]
        hardware_overrides:
          h200: {args: ["--spec", "m1-h200"]}
          hopper: {args: ["--spec", "m1-hopper"]}
          nvidia: {args: ["--spec", "m1-nvidia"]}
          default: {args: ["--spec", "m1-default"]}
      m2:
        hardware: {blackwell: unsupported, mi300x: unsupported}
        args: ["--spec", "m2"]
opt_in_features: [optin, spec]
variants:
  default: {}
  other: {default_modes: {spec: m2}}
compatible_strategies: [single_node_tp, single_node_tep]
"""

IMAGES = """
meta:
  title: Img
  tasks: [text]
  hardware: {arc_pro_b60: verified, trillium: verified, xeon6: verified}
model:
  model_id: test/Img
  docker_image:
    amd: "rocm/custom:1"
    nvidia: {cu129: "cuda/img:129", cu130: "cuda/img:130"}
variants:
  default: {}
  strpin: {docker_image: "nv/pin:1"}
  cuda129: {docker_image: {cu129: "cuda/only:129"}}
  exact: {hardware_overrides: {mi300x: {docker_image: "anything/verbatim"}}}
compatible_strategies: [single_node_tp]
"""

NIGHTLY = """
meta:
  title: Nightly
  tasks: [text]
  hardware: {xeon6: verified}
model:
  model_id: test/Nightly
  nightly_required: true
  base_env: {SOME_CONFIG_PATH: "/etc/cfg.json"}
variants:
  default: {}
compatible_strategies: [single_node_tp]
"""

QUOTING = """
meta: {title: Quote, tasks: [text]}
model:
  model_id: test/Quote
  base_args:
    - "--msg"
    - "it's"
    - "--sp"
    - "a b"
    - "--var"
    - "$HEAD_IP"
    - "--low"
    - "$lower"
    - "--mix"
    - "x$HOME"
    - "--json"
    - '{"a":1}'
    - "--ok"
    - "a=b,c:d@e+f%g/h.i-j"
variants:
  default: {}
compatible_strategies: [single_node_tp]
"""

PD = """
meta: {title: Pd, tasks: [text]}
model:
  model_id: test/Pd
  base_env: {NCCL_NVLS_ENABLE: "1", KEEP: "1"}
variants:
  default: {vram_minimum_gb: 10}
compatible_strategies: [single_node_tp, single_node_dep, pd_cluster]
strategy_overrides:
  pd_cluster:
    extra_args: ["--top-level", "ignored"]
    extra_env: {TOP_EXTRA_ENV: "ignored"}
    env: {SO_ENV: "1"}
    prefill:
      parallelism: tep
      extra_args: ["--role", "prefill"]
      hardware_overrides:
        h200: {extra_args: ["--role-exact", "h200"]}
        hopper: {extra_args: ["--role-gen", "ignored"]}
    decode:
      parallelism: dep
      tp: 2
      env: {DECODE_ENV: "1"}
"""

KV = """
meta: {title: Kv, tasks: [text]}
model:
  model_id: test/Kv
features:
  helper:
    args: ["--helper"]
    companion: {label: Helper, command: "run-helper"}
  plain:
    args: ["--plain"]
variants:
  default: {vram_minimum_gb: 1000}
compatible_strategies: [single_node_tp, multi_node_tp]
"""

SELECT = """
meta:
  title: Select
  tasks: [text]
  hardware: {rtx_5090: verified, mi300x: unsupported}
model:
  model_id: test/Select
variants:
  default: {vram_minimum_gb: 60}
  a: {vram_minimum_gb: 30, model_id: other/Select-A}
  b: {vram_minimum_gb: 30, model_id: other/Select-B}
  big: {vram_minimum_gb: 20}
compatible_strategies: [single_node_tp]
"""

NVFP4 = """
meta: {title: Fp4, tasks: [text]}
model:
  model_id: test/Fp4
variants:
  default: {precision: nvfp4, vram_minimum_gb: 10}
compatible_strategies: [single_node_tp]
"""


@pytest.fixture()
def repo(make_repo: MakeRepo) -> RecipesRepo:
    files = {
        "Layers": LAYERS,
        "Gen": GEN,
        "Tp": TP,
        "Feat": FEATURES,
        "Img": IMAGES,
        "Nightly": NIGHTLY,
        "Quote": QUOTING,
        "Pd": PD,
        "Kv": KV,
        "Select": SELECT,
        "Fp4": NVFP4,
    }
    return make_repo({f"models/test/{name}.yaml": text for name, text in files.items()})


def argv_tail(repo: RecipesRepo, request: RenderRequest) -> list[str]:
    return list(render(repo, request).commands[0].argv[3:])


# ---------------------------------------------------------------------------- §2.5 dedupe


def test_dedupe_pairs_flags_and_keeps_the_last_unit(repo: RecipesRepo) -> None:
    rendering = render(repo, RenderRequest("test/Layers", "h200", "single_node_tp"))
    assert list(rendering.commands[0].argv[3:]) == [
        "--x=1",  # `--x=1` and `--x 2` are different keys
        "--x",
        "2",
        "--flag",  # a boolean flag swallows the stray token after it
        "stray",
        "--a",  # last wins, at the last position
        "2",
        "--empty",  # its "" value was dropped before pairing: now boolean
        "-1",  # a value starting with "-" is its own flag
        "--tensor-parallel-size",
        "1",  # auto-fit: 100 GB <= 1128/8
        "--tool-call-parser",
        "t",
    ]
    assert rendering.json["command"] == (
        "vllm serve test/Layers \\\n  --x=1 \\\n  --x 2 \\\n  --flag stray \\\n  --a 2 \\\n"
        "  --empty \\\n  -1 \\\n  --tensor-parallel-size 1 \\\n  --tool-call-parser t"
    )


def test_env_values_keep_json_types_and_print_like_javascript(repo: RecipesRepo) -> None:
    found = render(repo, RenderRequest("test/Layers", "h200", "single_node_tp")).json
    assert found["env"] == {"BASE": "1", "PYTHONHASHSEED": 0, "FLAG": True, "RATIO": 1}
    assert type(found["env"]["RATIO"]) is int  # YAML 1.0 is the JS number 1
    pairs = [found["docker_argv"][i + 1] for i, t in enumerate(found["docker_argv"]) if t == "-e"]
    assert pairs == ["BASE=1", "PYTHONHASHSEED=0", "FLAG=true", "RATIO=1"]


# ---------------------------------------------------------------------------- §2.2/2.3 layers


def test_strategy_exact_block_beats_generation_layer_beats_variant_exact(
    repo: RecipesRepo,
) -> None:
    rendering = render(repo, RenderRequest("test/Gen", "mi355x", "single_node_tp"))
    command = rendering.commands[0]
    assert list(command.argv[3:]) == [
        "--base",
        "b",
        "--variant",
        "v",
        "--tensor-parallel-size",
        "1",
        "--so",
        "tp",
        "--vgen",
        "amd",
        "--x",
        "strategy-exact",
    ]
    assert dict(command.env) == {"VAR_ENV": "v", "X_ENV": "recipe-amd"}


def test_empty_strategy_generation_block_replaces_recipe_and_variant_blocks(
    repo: RecipesRepo,
) -> None:
    rendering = render(repo, RenderRequest("test/Gen", "h200", "single_node_tp"))
    assert argv_tail(repo, RenderRequest("test/Gen", "h200", "single_node_tp")) == [
        "--base",
        "b",
        "--variant",
        "v",
        "--tensor-parallel-size",
        "1",
        "--so",
        "tp",
    ]  # no --rgen/--vgen, and the recipe-level exact key h200 is never read
    assert dict(rendering.commands[0].env) == {"VAR_ENV": "v"}


def test_env_only_strategy_block_still_suppresses_generation_args(repo: RecipesRepo) -> None:
    rendering = render(repo, RenderRequest("test/Gen", "h200", "single_node_tep"))
    assert list(rendering.commands[0].argv[3:]) == [
        "--base",
        "b",
        "--variant",
        "v",
        "--enable-expert-parallel",
        "--tensor-parallel-size",
        "8",
    ]
    assert dict(rendering.commands[0].env) == {"VAR_ENV": "v", "SO_ENV": "hopper"}


def test_nvidia_block_applies_when_the_generation_has_none(repo: RecipesRepo) -> None:
    assert argv_tail(repo, RenderRequest("test/Gen", "b200", "single_node_tep"))[-4:] == [
        "--rgen",
        "nvidia",
        "--vgen",
        "nvidia",
    ]


# ---------------------------------------------------------------------------- §4 parallelism


@pytest.mark.parametrize(
    ("variant", "hardware", "strategy", "size"),
    [
        ("default", "h200", "single_node_tp", "8"),  # 200 GB > 141 GB per GPU
        ("small", "h200", "single_node_tp", "1"),  # 100 GB fits one GPU
        ("pinned", "h200", "single_node_tp", "4"),  # exact key
        ("pinned", "mi355x", "single_node_tp", "8"),  # generation key 16, clamped to G
        ("pinned", "b200", "single_node_tp", "2"),  # default key
        ("cpu", "xeon6", "single_node_tp", "16"),  # CPU profiles are not clamped
        ("cpu", "h200", "single_node_tp", "8"),
        ("default", "xeon6", "single_node_tp", "2"),  # strategy_overrides.single_node_tp.tp
        ("default", "arc_pro_b60", "single_node_tp", "4"),  # 200 > 96/4
        ("pinned", "h200", "single_node_tep", "8"),  # TEP ignores tp: G
    ],
)
def test_single_node_parallel_size(
    repo: RecipesRepo, variant: str, hardware: str, strategy: str, size: str
) -> None:
    tail = argv_tail(repo, RenderRequest("test/Tp", hardware, strategy, variant))
    assert tail[tail.index("--tensor-parallel-size") + 1] == size


def test_multi_node_tp_three_nodes(repo: RecipesRepo) -> None:
    found = render(repo, RenderRequest("test/Layers", "h200", "multi_node_tp", nodes=3)).json
    assert found["node_count"] == 3
    rendezvous = ["--nnodes", "3", "--node-rank", "0", "--master-addr", "$HEAD_IP"]
    head = found["head_argv"]
    at = head.index("--tensor-parallel-size")
    assert head[at : at + 8] == ["--tensor-parallel-size", "24", *rendezvous]
    assert [argv[at + 4 : at + 9] for argv in found["worker_argvs"]] == [
        ["--node-rank", "1", "--master-addr", "$HEAD_IP", "--headless"],
        ["--node-rank", "2", "--master-addr", "$HEAD_IP", "--headless"],
    ]
    assert found["worker_argv"] == found["worker_argvs"][0]
    assert found["worker_command"] == found["worker_commands"][0]
    assert len(found["worker_docker_argvs"]) == 2


def test_tp_pp_and_tp_dp_layouts(repo: RecipesRepo) -> None:
    pp = render(repo, RenderRequest("test/Layers", "h200", "multi_node_tp_pp", nodes=3)).json
    head = pp["head_argv"]
    at = head.index("--tensor-parallel-size")
    assert head[at : at + 4] == ["--tensor-parallel-size", "8", "--pipeline-parallel-size", "3"]
    dp = render(repo, RenderRequest("test/Layers", "h200", "multi_node_tp_dp", nodes=3)).json
    head = dp["head_argv"]
    at = head.index("--tensor-parallel-size")
    assert head[at : at + 8] == [
        "--tensor-parallel-size",
        "8",
        "--data-parallel-size",
        "3",
        "--data-parallel-size-local",
        "1",
        "--data-parallel-address",
        "$HEAD_IP",
    ]
    assert dp["worker_argvs"][1][at + 8 : at + 10] == ["--data-parallel-start-rank", "2"]
    assert "--headless" not in dp["worker_argvs"][1]


def test_multi_node_dep_local_override_moves_start_ranks(repo: RecipesRepo) -> None:
    found = render(repo, RenderRequest("test/Gen", "h200", "multi_node_dep", nodes=3)).json
    assert found["head_argv"][3:] == [
        "--base",
        "b",
        "--variant",
        "v",
        "--enable-expert-parallel",
        "--data-parallel-hybrid-lb",
        "--data-parallel-size",
        "24",
        "--data-parallel-address",
        "$HEAD_IP",
        "--data-parallel-size-local",  # the override shadows the generated 8 (last wins)
        "4",
        "--rgen",
        "hopper",
        "--vgen",
        "hopper",
    ]
    starts = [argv[argv.index("--data-parallel-start-rank") + 1] for argv in found["worker_argvs"]]
    assert starts == ["4", "8"]
    assert list(found["env"]) == [
        "VAR_ENV",
        "GLOO_SOCKET_IFNAME",
        "NCCL_SOCKET_IFNAME",
        "RGEN_ENV",
        "VGEN_ENV",
    ]


def test_multi_node_strategy_with_one_node_collapses_to_single_node(repo: RecipesRepo) -> None:
    found = render(repo, RenderRequest("test/Gen", "h200", "multi_node_dep", nodes=1)).json
    assert "argv" in found and "head_argv" not in found
    assert found["node_count"] == 1
    assert found["argv"][7:13] == [
        "--enable-expert-parallel",
        "--data-parallel-hybrid-lb",
        "--data-parallel-size",
        "8",
        "--data-parallel-size-local",
        "4",
    ]


# ---------------------------------------------------------------------------- §2.4 features


@pytest.mark.parametrize(
    ("hardware", "strategy", "tail"),
    [
        ("h100", "single_node_tp", ["--flat", "hopper", "--emptied", "x"]),
        ("b200", "single_node_tp", ["--flat", "nvidia"]),  # blackwell `args: []` emits nothing
        ("mi300x", "single_node_tp", ["--flat", "base", "--emptied", "x"]),  # {} block → args
        ("h100", "single_node_tep", ["--flat", "hopper", "--emptied", "x", "--only-tep"]),
    ],
)
def test_default_features_flat_overrides_and_allowlists(
    repo: RecipesRepo, hardware: str, strategy: str, tail: list[str]
) -> None:
    argv = argv_tail(repo, RenderRequest("test/Feat", hardware, strategy))
    assert argv[argv.index("--tensor-parallel-size") + 2 :] == tail


@pytest.mark.parametrize(
    ("variant", "hardware", "modes", "expected"),
    [
        ("default", "h200", {}, ["--spec", "m1-h200"]),  # exact key first
        ("default", "h100", {}, ["--spec", "m1-hopper"]),  # then generation
        ("default", "b200", {}, ["--spec", "m1-nvidia"]),  # then lower-case brand
        ("default", "mi300x", {}, ["--spec", "m1-default"]),  # then "default"
        ("default", "h200", {"spec": "m2"}, ["--spec", "m2"]),  # the user's pick
        ("other", "h200", {}, ["--spec", "m2"]),  # m1 is not allowed for variant key "other"
        ("other", "h200", {"spec": "m1"}, ["--spec", "m2"]),  # disallowed pick falls back
        ("other", "b200", {}, []),  # m2 is gated off on blackwell: no mode, no args
        ("other", "mi300x", {}, []),  # ... and on the exact id mi300x
    ],
)
def test_mode_selection(
    repo: RecipesRepo, variant: str, hardware: str, modes: dict[str, str], expected: list[str]
) -> None:
    request = RenderRequest("test/Feat", hardware, "single_node_tp", variant, ("spec",), modes)
    argv = argv_tail(repo, request)
    assert argv[argv.index("--tensor-parallel-size") + 2 :] == expected


def test_default_modes_force_an_opt_in_feature_on(repo: RecipesRepo) -> None:
    rendering = render(repo, RenderRequest("test/Feat", "h200", "single_node_tp", "other"))
    assert rendering.request.features == ("flat", "emptied", "only_tep", "spec")
    assert list(rendering.commands[0].argv[-2:]) == ["--spec", "m2"]
    default = render(repo, RenderRequest("test/Feat", "h200", "single_node_tp"))
    assert "spec" not in (default.request.features or ())


def test_explicit_features_keep_the_callers_order(repo: RecipesRepo) -> None:
    # upstream resolveCommand iterates enabledFeatures as given (the site appends on tick)
    request = RenderRequest("test/Feat", "h100", "single_node_tp", features=("optin", "flat"))
    assert argv_tail(repo, request)[-3:] == ["--optin", "--flat", "hopper"]
    request = RenderRequest("test/Feat", "h100", "single_node_tp", features=("flat", "optin"))
    assert argv_tail(repo, request)[-3:] == ["--flat", "hopper", "--optin"]


# ---------------------------------------------------------------------------- §3 image, text


@pytest.mark.parametrize(
    ("variant", "hardware", "image", "origin"),
    [
        ("default", "h200", "cuda/img:130", "model.docker_image.nvidia.cu130"),
        ("default", "mi300x", "rocm/custom:1", "model.docker_image.amd"),
        ("default", "trillium", "vllm/vllm-tpu:latest", "default-image:tpu"),
        ("default", "arc_pro_b60", "vllm/vllm-openai-xpu:latest", "default-image:xpu"),
        ("default", "xeon6", "vllm/vllm-openai-cpu:latest-x86_64", "default-image:intel"),
        ("strpin", "h200", "nv/pin:1", "variants.strpin.docker_image"),
        ("strpin", "mi300x", "rocm/custom:1", "model.docker_image.amd"),  # string: NVIDIA only
        ("cuda129", "h200", "cuda/only:129", "variants.cuda129.docker_image.cu129"),
        (
            "exact",
            "mi300x",
            "anything/verbatim",
            "variants.exact.hardware_overrides.mi300x.docker_image",
        ),
    ],
)
def test_image_resolution(
    repo: RecipesRepo, variant: str, hardware: str, image: str, origin: str
) -> None:
    rendering = render(repo, RenderRequest("test/Img", hardware, "single_node_tp", variant))
    assert (rendering.image, rendering.image_origin) == (image, origin)
    assert rendering.json["docker_image"] == image


def test_nightly_intel_cpu_has_no_image(repo: RecipesRepo) -> None:
    nightly = render(repo, RenderRequest("test/Nightly", "h200", "single_node_tp")).json
    assert nightly["docker_image"] == "vllm/vllm-openai:nightly"
    cpu = render(repo, RenderRequest("test/Nightly", "xeon6", "single_node_tp")).json
    assert "docker_image" not in cpu
    assert "  undefined test/Nightly" in cpu["docker_command"]
    assert None in cpu["docker_argv"]
    # env keys ending in _CONFIG_PATH are mounted read-only
    assert "-v /etc/cfg.json:/etc/cfg.json:ro" in cpu["docker_command"]


def test_only_flag_values_are_quoted(repo: RecipesRepo) -> None:
    command = render(repo, RenderRequest("test/Quote", "h200", "single_node_tp")).json["command"]
    assert command.split(" \\\n  ")[1:-1] == [
        "--msg 'it'\\''s'",
        "--sp 'a b'",
        "--var $HEAD_IP",
        "--low '$lower'",
        "--mix 'x$HOME'",
        "--json '{\"a\":1}'",
        "--ok a=b,c:d@e+f%g/h.i-j",
    ]


def test_amd_docker_form(repo: RecipesRepo) -> None:
    found = render(repo, RenderRequest("test/Quote", "mi300x", "single_node_tp")).json
    assert found["docker_command"].startswith(
        "docker run --device=/dev/kfd --device=/dev/dri \\\n"
        "  --security-opt seccomp=unconfined --group-add video \\\n"
        "  --privileged --ipc=host -p 8000:8000 \\\n"
    )
    assert found["docker_argv"][:8] == [
        "docker",
        "run",
        "--device=/dev/kfd",
        "--device=/dev/dri",
        "--security-opt",
        "seccomp=unconfined",
        "--group-add",
        "video",
    ]


# ---------------------------------------------------------------------------- §4.3 PD


def test_pd_colocated_roles(repo: RecipesRepo) -> None:
    found = render(repo, RenderRequest("test/Pd", "h200", "pd_cluster")).json
    prefill, decode = found["prefill"], found["decode"]
    assert prefill["argv"][3:] == [
        "--port",
        "8001",
        "--kv-transfer-config",
        '{"kv_connector":"NixlConnector","kv_role":"kv_producer","kv_load_failure_policy":"fail"}',
        "--tensor-parallel-size",  # tep is not an allowed pool mode here: snapped to tp
        "4",
        "--role",
        "prefill",
        "--role-exact",
        "h200",
    ]
    assert (prefill["parallelism"], prefill["tp"], prefill["dpLocal"], prefill["dpSize"]) == (
        "tep",
        4,
        0,
        1,
    )
    assert prefill["env"] == {
        "KEEP": "1",
        "VLLM_NIXL_SIDE_CHANNEL_PORT": "5557",
        "VLLM_NIXL_SIDE_CHANNEL_HOST": "$PREFILL_NODE_1",
        "CUDA_VISIBLE_DEVICES": "0,1,2,3",
        "SO_ENV": "1",
    }
    at = decode["argv"].index("--tensor-parallel-size")
    assert decode["argv"][at:] == [
        "--tensor-parallel-size",
        "2",
        "--data-parallel-size",
        "4",
        "--data-parallel-size-local",
        "4",
        "--data-parallel-start-rank",
        "0",
        "--data-parallel-address",
        "$DECODE_NODE_1",
        "--data-parallel-rpc-port",
        "$DECODE_DP_RPC_PORT",
        "--enable-expert-parallel",
    ]
    assert decode["env"]["CUDA_VISIBLE_DEVICES"] == "4,5,6,7"
    assert list(decode["env"])[-2:] == ["SO_ENV", "DECODE_ENV"]
    assert (decode["tp"], decode["dpLocal"], decode["poolGpus"]) == (2, 4, 4)
    assert found["env"] == {}
    assert found["router"]["command"] == (
        "vllm-router --policy round_robin \\\n    --vllm-pd-disaggregation \\\n"
        "    --prefill http://$PREFILL_NODE_1:8001 \\\n"
        "    --decode http://$DECODE_NODE_1:8002 \\\n"
        "    --host $ROUTER_HOST \\\n    --port $ROUTER_PORT \\\n"
        "    --intra-node-data-parallel-size 4"
    )


def test_pd_keeps_nvl4_env_only_on_gb200(repo: RecipesRepo) -> None:
    found = render(repo, RenderRequest("test/Pd", "gb200", "pd_cluster")).json
    assert found["prefill"]["env"]["NCCL_NVLS_ENABLE"] == "1"
    assert found["prefill"]["env"]["UCX_NET_DEVICES"] == "all"


def test_pd_multi_node_pools(repo: RecipesRepo) -> None:
    request = RenderRequest("test/Pd", "h200", "pd_cluster", pd_nodes={"prefill": 2, "decode": 2})
    found = render(repo, request).json
    prefill, decode = found["prefill"], found["decode"]
    at = prefill["argv"].index("--tensor-parallel-size")
    assert prefill["argv"][at : at + 8] == [
        "--tensor-parallel-size",
        "16",
        "--nnodes",
        "2",
        "--node-rank",
        "0",
        "--master-addr",
        "$PREFILL_NODE_1",
    ]
    assert prefill["env"]["CUDA_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"
    assert prefill["env"]["GLOO_SOCKET_IFNAME"] == "$IFACE_NAME"
    assert "--data-parallel-hybrid-lb" in decode["argv"]
    assert decode["argv"][decode["argv"].index("--data-parallel-size") + 1] == "8"
    assert found["router"]["command"].count("--decode http://$DECODE_NODE_") == 2


def test_pd_dep_follower_rank_binds_its_own_node(repo: RecipesRepo) -> None:
    request = RenderRequest(
        "test/Pd", "h200", "pd_cluster", pd_nodes={"decode": {"nodes": 2, "rank": 1}}
    )
    decode = render(repo, request).json["decode"]
    assert decode["env"]["VLLM_NIXL_SIDE_CHANNEL_HOST"] == "$DECODE_NODE_2"
    assert (decode["currentNode"], decode["startRank"]) == (1, 4)
    assert decode["argv"][decode["argv"].index("--data-parallel-start-rank") + 1] == "4"


# ---------------------------------------------------------------------------- §4.4 Mooncake


def test_mooncake_multi_node_instances(repo: RecipesRepo) -> None:
    found = render(repo, RenderRequest("test/Kv", "h100", "kv_store_centralized_mooncake")).json
    assert (found["serving_strategy"], found["node_count"], found["instances"]) == (
        "multi_node_tp",
        2,
        2,
    )
    argv = found["vllm_argv"]
    assert argv[3:] == [
        "--tensor-parallel-size",
        "16",
        "--nnodes",
        "2",
        "--node-rank",
        "0",
        "--master-addr",
        "$VLLM_INSTANCE_1",  # two instances: the head is the instance's address
        "--plain",  # the feature with a companion is dropped under Mooncake
        "--kv-transfer-config",
        '{"kv_connector":"MooncakeStoreConnector","kv_role":"kv_both"}',
    ]
    assert found["vllm_worker_argv"][-4:-2] == ["--headless", "--plain"]
    assert found["router"]["command"].count("--backend-url") == 2
    assert found["store"]["command"].startswith("python3 -m mooncake.mooncake_store_service")
    assert list(found["store"]) == ["command", "description", "config", "note"]
    single = render(repo, RenderRequest("test/Kv", "h200", "kv_store_distributed_mooncake")).json
    assert (single["serving_strategy"], single["node_count"]) == ("single_node_tp", 1)
    assert single["vllm_worker_argvs"] is None and single["router"] is None
    assert single["store"] is None
    plain = argv_tail(repo, RenderRequest("test/Kv", "h200", "single_node_tp"))
    assert plain[-2:] == ["--helper", "--plain"]


# ---------------------------------------------------------------------------- §5 selection


def test_api_hardware_selection_substitution_and_promotion(repo: RecipesRepo) -> None:
    files = build_api(repo, only_recipes={"models/test/Select.yaml", "models/test/Fp4.yaml"})
    select = {path for path in files if path.startswith("test/Select/hw/")}
    assert "test/Select/hw/mi300x.json" not in select  # meta.hardware: unsupported
    assert "test/Select/hw/rtx_5090.json" in select  # restricted, but declared
    assert "test/Select/hw/rtx_pro_6000.json" not in select  # restricted, undeclared
    # non-scalable rtx_5090 (32 GB): default (60 GB) → the largest fitting variant, YAML order
    assert files["test/Select/hw/rtx_5090.json"]["variant"] == "a"
    assert files["test/Select/hw/h200.json"]["variant"] == "default"
    assert any(path.startswith("other/Select-A/hw/") for path in files)
    assert any(path.startswith("other/Select-B/hw/") for path in files)
    # an nvfp4 variant only renders on NVIDIA Blackwell; b200 is then the default hardware
    fp4 = [path for path in files if path.startswith("test/Fp4/hw/") and path.count("/") == 3]
    assert fp4 and all(files[path]["hardware_profile"]["generation"] == "blackwell" for path in fp4)
    assert "test/Fp4/hw/b200.json" in files
    b200 = files["test/Fp4/hw/b200.json"]
    assert all(link.startswith("/test/Fp4/strategies/") for link in b200["alternatives"].values())


def test_request_defaults_follow_the_api(repo: RecipesRepo) -> None:
    rendering = render(repo, RenderRequest("test/Select", "rtx_5090"))
    assert (rendering.request.variant, rendering.request.strategy) == ("a", "single_node_tp")
    assert rendering.request.nodes == 1
    promoted = render(repo, RenderRequest("other/Select-B", "h200"))
    assert promoted.request.variant == "b"
    assert promoted.recipe_path == "models/test/Select.yaml"
    assert promoted.commands[0].argv[2] == "other/Select-B"


def test_bad_requests_are_one_line_errors(repo: RecipesRepo) -> None:
    from bot.errors import InputError

    cases: list[tuple[RenderRequest, str]] = [
        (RenderRequest("nobody/Nothing", "h200"), "no recipe or promoted variant"),
        (RenderRequest("test/Tp", "h300"), "unknown hardware id 'h300'"),
        (RenderRequest("test/Tp", "h200", "nope"), "unknown strategy 'nope'"),
        (RenderRequest("test/Tp", "h200", variant="nope"), "has no variant 'nope'"),
        (RenderRequest("test/Tp", "h200", features=("nope",)), "has no feature nope"),
        (RenderRequest("test/Feat", "h200", modes={"spec": "m9"}), "has no mode 'm9'"),
    ]
    for request, message in cases:
        with pytest.raises(InputError) as caught:
            render(repo, request)
        assert message in str(caught.value)
        assert "\n" not in str(caught.value)


def test_non_string_argument_is_a_located_render_error(make_repo: MakeRepo) -> None:
    from bot.recipes import RenderError

    repo = make_repo(
        {
            "models/test/Num.yaml": """
            model:
              model_id: test/Num
              base_args: ["--max-num-seqs", 8, "--zero", 0]
            variants: {default: {}}
            compatible_strategies: [single_node_tp]
            """
        }
    )
    with pytest.raises(RenderError, match=r"model\.base_args\[1\]"):
        render(repo, RenderRequest("test/Num", "h200", "single_node_tp"))
    # upstream's builder swallows the throw: the combination is simply not written
    assert build_api(repo) == {}


def test_mooncake_serving_follows_an_explicit_node_count(repo: RecipesRepo) -> None:
    two = render(repo, RenderRequest("test/Kv", "h200", "kv_store_distributed_mooncake", nodes=2))
    assert (two.json["serving_strategy"], two.json["node_count"]) == ("multi_node_tp", 2)
    assert two.json["vllm_worker_argv"] is not None
    one = render(repo, RenderRequest("test/Kv", "h100", "kv_store_distributed_mooncake", nodes=1))
    assert (one.json["serving_strategy"], one.json["node_count"]) == ("single_node_tp", 1)
