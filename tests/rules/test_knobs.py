"""rules/knobs.yaml: the knob class of every flag and env variable, and its validation."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bot.errors import InputError
from bot.rules import load_rules
from bot.rules.knobs import KnobClass
from tests.shared import shared_dir

RULES = Path(__file__).resolve().parents[2] / "rules"


@pytest.mark.parametrize(
    ("kind", "name", "expected"),
    [
        ("flag", "--moe-backend", KnobClass.KERNEL),
        ("flag", "--compilation-config.cudagraph_mode", KnobClass.TUNING),
        ("flag", "--compilation-config.cudagraph_capture_sizes", KnobClass.TUNING),
        ("flag", "--compilation-config.some_new_key", KnobClass.TUNING),  # the flag's class
        ("flag", "--max_num_seqs", KnobClass.TUNING),
        ("flag", "--max-num-seqs=128", KnobClass.TUNING),
        ("flag", "--no-enable-prefix-caching", KnobClass.WORKLOAD),
        ("flag", "--no-async-scheduling", KnobClass.WORKLOAD),
        ("flag", "--enable-hybrid-kv-cache-manager", KnobClass.WORKLOAD),  # 0.33 inverse
        ("flag", "--kv-cache-dtype", KnobClass.ACCURACY),
        ("flag", "--tool-call-parser", KnobClass.SERVING),
        ("flag", "--port", KnobClass.HARNESS),
        ("flag", "--enable-prompt-tokens-details", KnobClass.HARNESS),  # usage reporting
        ("flag", "--made-up-flag", KnobClass.UNCLASSIFIED),
        ("env", "VLLM_ROCM_USE_AITER_MOE", KnobClass.KERNEL),
        ("env", "AITER_TRITON_LOG_LEVEL", KnobClass.SERVING),  # exact name beats AITER_*
        ("env", "AITER_SOMETHING_NEW", KnobClass.KERNEL),
        ("env", "VLLM_ROCM_QUICK_REDUCE_QUANTIZATION", KnobClass.ACCURACY),
        ("env", "VLLM_ENGINE_READY_TIMEOUT_S", KnobClass.TUNING),  # a recipe user's too
        ("env", "VLLM_RPC_TIMEOUT", KnobClass.HARNESS),
        ("env", "PYTHONNOUSERSITE", KnobClass.HARNESS),
        ("env", "VLLM_SOMETHING_NEW", KnobClass.UNCLASSIFIED),
    ],
)
def test_knob_class(kind: str, name: str, expected: KnobClass) -> None:
    assert load_rules(RULES).knob_class(kind, name) is expected  # type: ignore[arg-type]


def test_flags_are_looked_up_in_any_spelling() -> None:
    knobs = load_rules(RULES).knobs
    found = knobs.lookup_flag("--no-enable_prefix_caching")
    assert found is not None and found[1].flag == "--enable-prefix-caching"
    dotted = knobs.lookup_flag("--compilation_config.cudagraph-mode")
    assert dotted is not None and dotted[1].flag == "--compilation-config.cudagraph_mode"


def test_policy_defaults_follow_maintainers() -> None:
    policy = load_rules(RULES).policy
    assert policy.knob_policy.action(KnobClass.KERNEL) == "recipe"
    assert policy.knob_policy.action(KnobClass.ACCURACY) == "recipe-with-eval"
    assert policy.knob_policy.action(KnobClass.TUNING) == "reproduction"
    assert policy.knob_policy.action(KnobClass.WORKLOAD) == "feature"
    assert policy.knob_policy.action(KnobClass.HARNESS) == "never"
    assert policy.knob_policy.action(KnobClass.UNCLASSIFIED) is None
    feature = policy.workload_feature("agentic-coding")
    assert feature is not None and feature.feature == "agentic"
    assert policy.workload_feature("fixed-seq-len") is None


@pytest.mark.parametrize(
    ("file", "old", "new", "where", "reason"),
    [
        ("knobs.yaml", "{flag: --moe-backend,", "{flag: --moe_backend,", "knobs.yaml:", "pattern"),
        (
            "knobs.yaml",
            "    - {flag: --max-num-seqs,",
            "    - {flag: --moe-backend}\n    - {flag: --max-num-seqs,",
            "key 'flags.tuning.5'",  # the sixth tuning entry: five compilation keys precede it
            "already classed kernel",
        ),
        ("knobs.yaml", '  tuning: "throughput', '  tunning: "throughput', "classes", ""),
        (
            "knobs.yaml",
            "flags: [--decode-context-parallel-size, --dcp-comm-backend,",
            "flags: [--decode_context_parallel_size, --dcp-comm-backend,",
            "together.0.flags.0",
            "canonical spelling",
        ),
        ("policy.yaml", "  tuning: reproduction", "  tuning: sometimes", "knob_policy", ""),
        (
            "flags.yaml",
            "{flag: --max-num-seqs, placement",
            "{flag: --max-num-sequences, placement",
            "flags.yaml:",
            "no class in knobs.yaml",
        ),
    ],
)
def test_broken_knob_rules_are_located(
    tmp_path: Path, file: str, old: str, new: str, where: str, reason: str
) -> None:
    target = tmp_path / "rules"
    shutil.copytree(RULES, target)
    path = target / file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(InputError) as err:
        load_rules(target)
    message = str(err.value)
    assert "\n" not in message and where in message and reason in message
    assert f"{file}:" in message and message.split(f"{file}:")[1][:1].isdigit()


@pytest.mark.slow
def test_every_knob_the_real_vllm_scripts_set_is_classified(tmp_path: Path) -> None:
    bundle = shared_dir() / "data" / "history" / "InferenceX-main-upto-2026-08-21.bundle"
    if not bundle.exists():
        pytest.skip(f"real InferenceX history not present at {bundle}")
    from bench.knob_census import from_history, from_launches
    from bot.sources import GitTreeSource

    repo = tmp_path / "ix"
    subprocess.run(["git", "clone", "-q", str(bundle), str(repo)], check=True)
    rules = load_rules(RULES)
    census = from_launches(GitTreeSource(repo, "main"), rules)
    census.update(from_history(repo))
    assert len(census) > 100
    unclassified = sorted(
        name
        for kind, name in census
        if rules.knob_class("flag" if kind == "flag" else "env", name) is KnobClass.UNCLASSIFIED
    )
    assert unclassified == []


def test_a_knob_without_its_own_reason_gets_a_description_not_a_claim() -> None:
    """A variable a pattern classes (``VLLM_ROCM_*``) has no reason of its own: the PR text
    shows its class's description, which claims nothing about the variable ("without it the
    recipe runs a different kernel" was said of variables whose default may be the same;
    issue #31)."""
    knobs = load_rules(RULES).knobs
    reason = knobs.reason("env", "VLLM_ROCM_SHUFFLE_KV_CACHE_LAYOUT")
    assert reason == "which kernel or backend vLLM runs"
    assert knobs.reason("flag", "--moe-backend") == "MoE kernel selection"  # its own
