"""Which unresolved items of a launch line keep a row from being compared."""

from __future__ import annotations

from dataclasses import replace

from bot.audit.launch import describe_unresolved, unresolved_impact
from bot.benchmarks import LaunchLine, Point, SourceSpan, Unresolved
from bot.rules import default_rules

SCRIPT = "benchmarks/single_node/agentic/acme_fp8_mi999_vllm.sh"
PORT = Unresolved("$PORT", "depends on the runner node that picks the job", "<job env>", None)


def launch(*argv: str, env: dict[str, str] | None = None) -> LaunchLine:
    point = Point(tp=8, ep=1, dp_attn=True, conc=64, spec_decoding="none",
                  scenario="agentic-coding", isl=None, osl=None, kv_offloading="none",
                  kv_offload_backend=None)  # fmt: skip
    full = ("vllm", "serve", "acme/Foo-7B", *argv)
    return LaunchLine(
        config_key="acme-fp8-mi999-vllm-agentic", point=point, arm="throughput",
        framework="vllm", runner="cluster:mi999-x", model="acme/Foo-7B", precision="fp8",
        image="vllm/vllm-openai:v0.33.0", model_prefix="acme", script=SCRIPT,
        script_blob_sha=None, argv=full, argv_sources=tuple(SourceSpan(SCRIPT, 9) for _ in full),
        env=env or {}, job_env={}, unresolved=(PORT,), invalid=None,
    )  # fmt: skip


def test_a_port_derived_by_arithmetic_is_still_front_end_only() -> None:
    # a router in front of DP ranks: the engine listens on PORT+1 (agentic DP-attention scripts)
    line = launch("--port", "<$((PORT+1)):opaque:derived>", "--data-parallel-size", "8")
    impact = unresolved_impact(line, default_rules())
    assert impact.serving == ()
    assert impact.inert == ((PORT, ("--port",)),)


def test_a_derived_value_in_a_serving_flag_still_counts() -> None:
    line = launch("--port", "8888", "--max-num-seqs", "<$((PORT/2)):opaque:derived>")
    assert unresolved_impact(line, default_rules()).serving == (PORT,)


def test_a_derived_value_in_a_serving_env_var_counts() -> None:
    line = launch("--port", "<$((PORT+1)):opaque:derived>",
                  env={"VLLM_RPC_BASE_PORT": "<$((PORT+100)):opaque:derived>"})  # fmt: skip
    assert unresolved_impact(line, default_rules()).serving == (PORT,)


PYTHON = Unresolved("output of `python3 -c …`", "Python is never executed", SCRIPT, 4)


def test_an_unknown_located_only_in_a_front_end_flag_is_a_note() -> None:
    # the item is not named after a variable: where it reaches comes from the extractor
    line = launch("--served-model-name", "<NAME:opaque:command-output>", "--port", "8888")
    line = replace(line, unresolved=(PYTHON,), reach={PYTHON: ("argv:4",)})
    impact = unresolved_impact(line, default_rules())
    assert impact.serving == ()
    assert impact.inert == ((PYTHON, ("--served-model-name",)),)


def test_an_unknown_in_the_model_argument_names_it() -> None:
    line = replace(
        launch("--port", "8888"),
        argv=("vllm", "serve", "<MODEL_PATH:opaque:command-output>", "--port", "8888"),
        unresolved=(PYTHON,),
        reach={PYTHON: ("argv:2", "env:MODEL_PATH")},
    )
    impact = unresolved_impact(line, default_rules())
    assert impact.serving == (PYTHON,)
    assert impact.serving_where == (("the model argument", "env MODEL_PATH"),)
    assert "in the model argument, env MODEL_PATH" in describe_unresolved(
        PYTHON, impact.serving_where[0]
    )
