"""The Widget fixture of the reproduction tests: the seed's base repositories plus
``fixtures/reproduction`` (benchmark lanes) and a recipe written with the guide a case needs."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from bot.align.result import AlignInputs, AlignRun
from bot.align.run import align
from bot.rules import Rules, load_rules
from bot.sources import DirectorySource

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
WIDGET = "models/acme/Widget.yaml"
TP4_KEY = "widget-fp4-mi355x-vllm"
AGENTIC_KEY = "widget-fp4-mi355x-vllm-agentic-mtp"

RECIPE_HEAD = """\
meta:
  title: "Widget"
  slug: "widget"
  provider: "Acme"
  description: "A test MoE with an MTP head."
  date_added: 2026-01-01
  difficulty: intermediate
  tasks:
    - text
  hardware:
    mi355x: supported  # not yet verified

model:
  model_id: "acme/Widget"
  min_vllm_version: "0.30.0"
  architecture: moe
  parameter_count: "100B"
  active_parameters: "10B"
  context_length: 131072
  base_args:
    - "--trust-remote-code"
  base_env: {}

features:
  spec_decoding:
    description: "MTP speculative decoding"
    args:
      - "--speculative-config"
      - '{"method":"mtp","num_speculative_tokens":3}'

opt_in_features:
  - spec_decoding

variants:
  default:
    precision: fp4
    vram_minimum_gb: 400

compatible_strategies:
  - single_node_tp
  - single_node_dep

hardware_overrides:
  amd:
    extra_args:
      - "--moe-backend"
      - "aiter"
    extra_env:
      VLLM_ROCM_USE_AITER: "1"
      VLLM_ROCM_USE_AITER_MOE: "1"

"""

GUIDE = """\
guide: |
  ## Overview

  Widget is a 100B MoE.

  ## Launching the Server

  ### AMD MI355X (TP8)

  ```bash
  vllm serve acme/Widget --tensor-parallel-size 8 --trust-remote-code --moe-backend aiter
  ```

  ## Troubleshooting

  - Out of memory: lower `--gpu-memory-utilization`.
"""

# A maintainer's own reproduction section for the TP4 lane: its command has drifted (no
# fp8 KV cache, an old --max-num-seqs) and it cites the benchmark.
HAND_WRITTEN = """\
  ### Benchmark reproduction (InferenceX MI355X sweep)

  The InferenceX MI355X lane runs TP4:

  ```bash
  export VLLM_ROCM_USE_AITER=1
  vllm serve acme/Widget \\
    --port "${PORT:-8000}" \\
    --tensor-parallel-size 4 \\
    --trust-remote-code \\
    --moe-backend aiter \\
    --max-num-seqs 256 \\
    --max-model-len "$MAX_MODEL_LEN"
  ```

"""


def guide_with_hand_written_section() -> str:
    marker = "  ## Troubleshooting\n"
    return GUIDE.replace(marker, HAND_WRITTEN + marker)


def build(tmp: Path, guide: str = GUIDE) -> tuple[Path, Path]:
    """(benchmark repo dir, recipes dir) in ``tmp``."""
    bench = tmp / "bench"
    shutil.copytree(FIXTURES / "benchmark-repo" / "base", bench)
    overlay = FIXTURES / "reproduction" / "bench"
    shutil.copytree(overlay / "benchmarks", bench / "benchmarks", dirs_exist_ok=True)
    master = bench / "configs" / "amd-master.yaml"
    master.write_text(
        master.read_text() + (overlay / "amd-master.append.yaml").read_text(), encoding="utf-8"
    )
    recipes = tmp / "recipes"
    shutil.copytree(FIXTURES / "recipes-repo" / "base", recipes)
    write_recipe(recipes, guide)
    return bench, recipes


def write_recipe(recipes: Path, guide: str) -> None:
    path = recipes / WIDGET
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(RECIPE_HEAD + guide, encoding="utf-8")


def guide_rules(reproduction: str = "always") -> Rules:
    """The bundled rules with policy ``reproduction`` set: these cases write a block for a
    lane whose settings stay out of the recipe, as a repository that asks for guide-only
    PRs (``.github/recipe-sync.yml``) gets; the default writes none without a recipe edit."""
    rules = load_rules()
    return replace(rules, policy=rules.policy.model_copy(update={"reproduction": reproduction}))


def run(bench: Path, recipes: Path, keys: tuple[str, ...], rules: Rules | None = None) -> AlignRun:
    return align(
        AlignInputs(
            bench=DirectorySource(bench),
            bench_base=None,
            recipes=DirectorySource(recipes),
            rules=rules or guide_rules(),
            config_keys=keys,
            bench_repo="SemiAnalysisAI/InferenceX",
            pr_number=4000,
            head_sha="ab" * 20,
        )
    )


TP4_SCRIPT = "benchmarks/single_node/fixed_seq_len/widget_fp4_mi355x_vllm.sh"


def run_pr(
    tmp: Path,
    at_base: Callable[[str], str],
    at_head: Callable[[str], str],
    included: frozenset[str] = frozenset(),
    dropped: Mapping[str, str] | None = None,
) -> AlignRun:
    """A benchmark PR on the TP4 lane's script: its base is the fixture's script through
    ``at_base``, its head the base's through ``at_head``; aligned with the bundled rules (the
    keys the PR changed, as the App does), ``included`` ticked for every recipe."""
    base, recipes = build(tmp)
    script = base / TP4_SCRIPT
    script.write_text(at_base(script.read_text()))
    head = tmp / "head"
    shutil.copytree(base, head)
    (head / TP4_SCRIPT).write_text(at_head(script.read_text()))
    return align(
        AlignInputs(
            bench=DirectorySource(head),
            bench_base=DirectorySource(base),
            recipes=DirectorySource(recipes),
            rules=load_rules(),
            config_keys=(),
            bench_repo="SemiAnalysisAI/InferenceX",
            pr_number=4000,
            head_sha="ab" * 20,
            included={"*": included},
            dropped={"*": dropped or {}},
        )
    )
