"""The environment a single-node job gives its script (docs/spec/benchmark-extraction.md §1.3,
§1.5).

The workflow-level ``env:`` block of ``benchmark-tmpl.yml`` (matrix row fields, eval flags,
scenario variables, constants), the launch-step variables, then the launcher's own edits.
Values known only at run time are named placeholders (``<PORT:opaque:runner-node>``).
"""

from __future__ import annotations

import json
import math
import re

from bot.benchmarks.configs import MasterEntry
from bot.benchmarks.matrix import AGENTIC_DURATION, Row
from bot.benchmarks.runners import RunnersFile
from bot.digits import is_integer
from bot.placeholders import placeholder
from bot.rules.models import Launcher

# Constants of the benchmark template's env block that every job gets.
TEMPLATE_CONSTANTS: dict[str, str] = {
    "RANDOM_RANGE_RATIO": "0.8",
    "HF_HUB_CACHE": "/mnt/hf_hub_cache/",
    "RESULT_DIR": "/workspace/results",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONPYCACHEPREFIX": "/tmp/inferencex-pycache",
    "AIPERF_FAILED_REQUEST_THRESHOLD": "0.10",
    "SWEBENCH_USE_MODAL": "true",
}
# Inputs of the template whose values depend on how the sweep was dispatched (labels, inputs).
TEMPLATE_INPUTS = (
    "REQUIRE_POWER",
    "AIPERF_EXPERIMENTAL_FAST",
    "EVAL_LIMIT",
    "SWEBENCH_GEN_MODE",
    "SALLOC_EXCLUDE",
)
DRAM_CAP_MIB = 2_861_022


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":")) if value else ""


def total_cpu_dram_gb(row: Row, runner_label: str, runners: RunnersFile | None) -> str:
    point = row.point
    if point.scenario != "agentic-coding" or point.kv_offloading != "dram":
        return "0"
    facts = (runners.hardware.get(runner_label) if runners is not None else None) or {}
    mib = facts.get("available-cpu-dram-mib")
    gpus = facts.get("gpus-per-node")
    if not mib or not gpus or row.dram_utilization is None:
        return placeholder("TOTAL_CPU_DRAM_GB", "runners-yaml")
    share = point.tp * point.pp * point.pcp / gpus
    return str(math.floor(min(mib, DRAM_CAP_MIB) * 2**20 * row.dram_utilization * share / 1e9))


def result_filename(entry: MasterEntry, row: Row, runner_name: str) -> str:
    p = row.point
    return (
        f"{row.exp_name}_{entry.precision}_{entry.framework}_tp{p.tp}-pp{p.pp}-dcp{p.dcp}-"
        f"pcp{p.pcp}-ep{p.ep}-dpa{str(p.dp_attn).lower()}_disagg-{str(entry.disagg).lower()}_"
        f"spec-{p.spec_decoding}_conc{p.conc}_{runner_name}"
        f"_recipe-{placeholder('RECIPE_FINGERPRINT', 'recipe-fingerprint')}"
    )


def template_env(
    entry: MasterEntry,
    row: Row,
    arm: str,
    *,
    runners: RunnersFile | None,
    runner_node: str | None,
) -> dict[str, str]:
    """The benchmark template's env block plus the launch-step variables, in that order."""
    point = row.point
    agentic = point.scenario == "agentic-coding"
    eval_arm = arm == "eval"
    backend = row.kv_offload_backend if agentic and not eval_arm else None
    router = entry.router if not (agentic and eval_arm) else None
    runner_name = runner_node or placeholder("RUNNER_NAME", "runner-node")
    env: dict[str, str] = {
        "MODEL": entry.model,
        "MODEL_PREFIX": entry.model_prefix,
        "IMAGE": entry.image,
        "FRAMEWORK": entry.framework,
        "PRECISION": entry.precision,
        "EXP_NAME": row.exp_name,
        "ISL": "0" if agentic else str(point.isl),
        "OSL": "0" if agentic else str(point.osl),
        "MAX_MODEL_LEN": "0" if agentic else str(row.max_model_len),
        "TP": str(point.tp),
        "PP_SIZE": str(point.pp),
        "DCP_SIZE": str(point.dcp),
        "PCP_SIZE": str(point.pcp),
        "EP_SIZE": str(point.ep),
        "CONC": str(point.conc),
        "DP_ATTENTION": str(point.dp_attn).lower(),
        "SPEC_DECODING": point.spec_decoding,
        "DISAGG": "false",
        "RUN_EVAL": "true" if eval_arm else "false",
        "EVAL_ONLY": "true" if eval_arm else "false",
        "SCENARIO_TYPE": point.scenario,
        "SCENARIO_SUBDIR": "agentic/" if agentic else "fixed_seq_len/",
        "IS_AGENTIC": "1" if agentic else "0",
        "KV_OFFLOADING": (point.kv_offloading or "none") if agentic else "",
        "KV_OFFLOAD_BACKEND": (point.kv_offload_backend or "") if agentic else "",
        "KV_OFFLOAD_BACKEND_METADATA": _compact(backend),
        "ROUTER_METADATA": _compact(router),
        "TOTAL_CPU_DRAM_GB": total_cpu_dram_gb(row, entry.runner, runners),
        "DURATION": str(AGENTIC_DURATION),
        **TEMPLATE_CONSTANTS,
        **{name: placeholder(name, "workflow-input") for name in TEMPLATE_INPUTS},
        "HF_TOKEN": placeholder("HF_TOKEN", "secret"),
        "RUNNER_NAME": runner_name,
        "RUNNER_TYPE": entry.runner,
        "RESULT_FILENAME": result_filename(entry, row, runner_name),
        "GPU_COUNT": str(point.tp * point.pp * point.pcp),
    }
    return env


_TEMPLATE_REF = re.compile(r"\$\{([A-Za-z_]\w*)\}")


def apply_launcher(
    env: dict[str, str], launcher: Launcher, *, fleet: str, runner_node: str | None
) -> dict[str, str]:
    """The launcher's edits: PORT, staged MODEL_PATH, its env, its docker -e whitelist."""
    out = dict(env)
    if launcher.port is not None:
        if launcher.port == "opaque":
            out["PORT"] = placeholder("PORT", "slurm-job-id")
        elif launcher.port.startswith("runner-digit:"):
            base = int(launcher.port.split(":", 1)[1])
            digit = runner_node[-1:] if runner_node else ""
            out["PORT"] = (
                str(base + int(digit)) if is_integer(digit) else placeholder("PORT", "runner-node")
            )
        else:
            out["PORT"] = launcher.port
    if launcher.model_paths:
        key = f"{out.get('MODEL_PREFIX', '')}/{out.get('PRECISION', '')}"
        staged = launcher.model_paths.get(key)
        if staged is None:  # the real launcher exits for a model it does not stage
            out["MODEL_PATH"] = placeholder("MODEL_PATH", "launcher-unlisted-model")
        elif staged == "opaque":
            out["MODEL_PATH"] = placeholder("MODEL_PATH", "launcher-staged-model")
        else:
            out["MODEL_PATH"] = staged
    elif launcher.staged_models is not None and "MODEL" in out:
        rule = launcher.staged_models
        name = out["MODEL"].rsplit("/", 1)[-1]  # ${MODEL##*/}
        root = rule.staged_dir if name in rule.names else rule.writable_dir
        out["MODEL_PATH"] = f"{root.rstrip('/')}/{name}"
    for name, template in launcher.env.items():
        out[name] = _TEMPLATE_REF.sub(lambda m: out.get(m.group(1), ""), template)
    if launcher.whitelist is not None:
        allowed = set(launcher.whitelist)
        out = {name: value for name, value in out.items() if name in allowed}
    return out
